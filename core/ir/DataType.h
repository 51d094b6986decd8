#pragma once
// Tensor element types. The numeric values are ONNX's TensorProto.DataType, so they pass
// through import/export unchanged.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace passlens::ir {

enum class DataType : int32_t {
    Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
    String = 8, Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, Complex64 = 14,
    Complex128 = 15, BFloat16 = 16,
};

/// Bytes per element; 0 for String and Undefined (no fixed size).
size_t elementSize(DataType t);
/// Lower-case ONNX-style name ("float32", "int64", "bool", ...).
std::string_view dataTypeName(DataType t);
bool isFloatingPoint(DataType t);
bool isKnownDataType(int32_t raw);

}  // namespace passlens::ir
