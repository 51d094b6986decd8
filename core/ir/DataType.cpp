#include "ir/DataType.h"

namespace passlens::ir {

size_t elementSize(DataType t) {
    switch (t) {
    case DataType::Float: case DataType::Int32: case DataType::UInt32: return 4;
    case DataType::UInt8: case DataType::Int8: case DataType::Bool: return 1;
    case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ: return 1;
    case DataType::UInt4: case DataType::Int4: case DataType::Float4E2M1: return 0;  // packed: storageBytes
    case DataType::UInt16: case DataType::Int16: case DataType::Float16: case DataType::BFloat16: return 2;
    case DataType::Int64: case DataType::Double: case DataType::UInt64: case DataType::Complex64: return 8;
    case DataType::Complex128: return 16;
    case DataType::String: case DataType::Undefined: return 0;
    }
    return 0;
}

std::string_view dataTypeName(DataType t) {
    switch (t) {
    case DataType::Undefined: return "undefined";
    case DataType::Float: return "float32";
    case DataType::UInt8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::UInt16: return "uint16";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::String: return "string";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Double: return "float64";
    case DataType::UInt32: return "uint32";
    case DataType::UInt64: return "uint64";
    case DataType::Complex64: return "complex64";
    case DataType::Complex128: return "complex128";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Float8E4M3FN: return "float8e4m3fn";
    case DataType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DataType::Float8E5M2: return "float8e5m2";
    case DataType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DataType::UInt4: return "uint4";
    case DataType::Int4: return "int4";
    case DataType::Float4E2M1: return "float4e2m1";
    }
    return "unknown";
}

bool isFloatingPoint(DataType t) {
    return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

bool isKnownDataType(int32_t raw) { return raw >= 0 && raw <= 23; }

bool isFourBit(DataType t) { return t == DataType::UInt4 || t == DataType::Int4 || t == DataType::Float4E2M1; }

size_t storageBytes(DataType t, size_t count) { return isFourBit(t) ? (count + 1) / 2 : count * elementSize(t); }

}  // namespace passlens::ir
