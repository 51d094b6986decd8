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
    // IR 9–11 (opsets 19–23): 8-bit floats, and 4-bit types packed two to a byte (low nibble first).
    Float8E4M3FN = 17, Float8E4M3FNUZ = 18, Float8E5M2 = 19, Float8E5M2FNUZ = 20, UInt4 = 21, Int4 = 22,
    Float4E2M1 = 23,
};

/// Bytes per element; 0 for String, Undefined and the packed 4-bit types (no whole-byte size:
/// code that indexes elements by bytes must not take them; storageBytes gives a payload's size).
size_t elementSize(DataType t);
/// Bytes a payload of `count` elements takes (4-bit types packed two to a byte, rounded up).
size_t storageBytes(DataType t, size_t count);
bool isFourBit(DataType t);
/// Lower-case ONNX-style name ("float32", "int64", "bool", ...).
std::string_view dataTypeName(DataType t);
bool isFloatingPoint(DataType t);
bool isKnownDataType(int32_t raw);

}  // namespace passlens::ir
