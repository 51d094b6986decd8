#include "ir/Type.h"

#include "ir/CheckedMath.h"
#include "ir/Error.h"

namespace passlens::ir {

bool Shape::isStatic() const {
    for (const auto& d : dims)
        if (!d.isStatic()) return false;
    return true;
}

std::vector<int64_t> Shape::staticDims() const {
    std::vector<int64_t> out;
    out.reserve(dims.size());
    for (const auto& d : dims) {
        if (!d.isStatic()) throw Error(ErrorKind::BadInput, "shape " + toString() + " is not static");
        out.push_back(*d.value);
    }
    return out;
}

std::string Shape::toString() const {
    if (dims.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i) s += 'x';
        if (dims[i].value) s += std::to_string(*dims[i].value);
        else if (!dims[i].param.empty()) s += dims[i].param;
        else s += '?';
    }
    return s;
}

std::string TypeInfo::toString() const {
    switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Opaque: return "non-tensor";
    case Kind::Tensor: break;
    }
    std::string s(dataTypeName(elemType));
    s += '[';
    s += shape ? shape->toString() : "?";
    s += ']';
    return s;
}

std::optional<int64_t> checkedProduct(const std::vector<int64_t>& dims, int64_t factor) {
    int64_t n = factor;
    if (n < 0) return std::nullopt;
    for (int64_t d : dims) {
        if (d < 0 || (d != 0 && n > INT64_MAX / d)) return std::nullopt;
        n *= d;
    }
    return n;
}

int64_t checkedElementCount(const std::vector<int64_t>& dims, const std::string& what) {
    int64_t n = 1;
    for (int64_t d : dims) {
        if (d < 0) throwBadInput(what + ": negative dimension " + std::to_string(d));
        if (d != 0 && n > INT64_MAX / d)
            throwBadInput(what + ": element count overflows int64 (dimension " + std::to_string(d) + ")");
        n *= d;
    }
    return n;
}

}  // namespace passlens::ir
