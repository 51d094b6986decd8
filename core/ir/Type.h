#pragma once
// Value types: a tensor type with element type and a shape whose dims may be symbolic, or an
// opaque non-tensor type (sequence, map, optional, sparse) kept as serialized TypeProto bytes so
// that import/export loses nothing.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/DataType.h"

namespace passlens::ir {

struct Dim {
    std::optional<int64_t> value;  ///< set for a static dim
    std::string param;             ///< symbolic name ("batch"); empty with no value = unknown
    std::string denotation;

    static Dim of(int64_t v) { Dim d; d.value = v; return d; }
    static Dim symbol(std::string p) { Dim d; d.param = std::move(p); return d; }
    bool isStatic() const { return value.has_value(); }
    bool operator==(const Dim&) const = default;
};

struct Shape {
    std::vector<Dim> dims;
    bool operator==(const Shape&) const = default;
    size_t rank() const { return dims.size(); }
    bool isStatic() const;
    /// Static dims as integers; throws when a dim is symbolic or unknown.
    std::vector<int64_t> staticDims() const;
    /// "1x3x224x224", "batchx3x?x?", "scalar".
    std::string toString() const;
};

struct TypeInfo {
    enum class Kind { Unknown, Tensor, Opaque };
    Kind kind = Kind::Unknown;
    DataType elemType = DataType::Undefined;
    std::optional<Shape> shape;   ///< absent = rank unknown
    std::string denotation;
    std::string opaqueProto;      ///< serialized onnx.TypeProto for Kind::Opaque

    static TypeInfo tensor(DataType t, std::optional<Shape> s = std::nullopt) {
        TypeInfo ti; ti.kind = Kind::Tensor; ti.elemType = t; ti.shape = std::move(s); return ti;
    }
    bool isTensor() const { return kind == Kind::Tensor; }
    bool known() const { return kind != Kind::Unknown; }
    bool operator==(const TypeInfo&) const = default;
    /// "float32[1x3x224x224]", "float32[?]", "sequence", "?".
    std::string toString() const;
};

/// Multiplies dims, throwing BadInput (naming `what`) when the product overflows int64.
int64_t checkedElementCount(const std::vector<int64_t>& dims, const std::string& what);

}  // namespace passlens::ir
