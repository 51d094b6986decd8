#include "passes/layout/TransposeUtil.h"
#include "eval/TensorOps.h"

#include <cstring>

namespace passlens::passes::layoututil {

using namespace passlens::ir;

bool isIdentity(const Perm& p) {
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
}

Perm invert(const Perm& p) {
    Perm inv(p.size());
    for (size_t i = 0; i < p.size(); ++i) inv[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    return inv;
}

Perm compose(const Perm& first, const Perm& second) {
    // y[i] = a[second[i]] = x[first[second[i]]]
    Perm r(second.size());
    for (size_t i = 0; i < second.size(); ++i) r[i] = first[static_cast<size_t>(second[i])];
    return r;
}

bool isPermutation(const Perm& p) {
    std::vector<bool> seen(p.size(), false);
    for (int64_t v : p) {
        if (v < 0 || v >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(v)]) return false;
        seen[static_cast<size_t>(v)] = true;
    }
    return true;
}

std::optional<Perm> permOf(const Graph& g, NodeId n) {
    const Node& node = g.node(n);
    if (node.inputs.empty() || node.inputs[0] == kNone) return std::nullopt;
    int64_t r = rankOf(g, node.inputs[0]);
    if (const Attribute* a = node.attr("perm")) {
        if (!isPermutation(a->ints) || (r >= 0 && static_cast<int64_t>(a->ints.size()) != r)) return std::nullopt;
        return a->ints;
    }
    if (r < 0) return std::nullopt;
    Perm p(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) p[static_cast<size_t>(i)] = r - 1 - i;
    return p;
}

TensorPtr transposeTensor(const Tensor& t, const Perm& p) {
    // The permutation loop itself is the interpreter's (eval/TensorOps); this adds the checks a
    // file's Transpose needs (a string tensor or a perm of the wrong rank is not folded).
    if (elementSize(t.dtype) == 0 || p.size() != t.dims.size() || !isPermutation(p)) return nullptr;
    return eval::permuted(t, p);
}

TypeInfo permutedType(const TypeInfo& t, const Perm& p) {
    if (!t.isTensor() || !t.shape || t.shape->rank() != p.size()) return t.isTensor() ? TypeInfo::tensor(t.elemType) : TypeInfo{};
    Shape s;
    for (size_t i = 0; i < p.size(); ++i) s.dims.push_back(t.shape->dims[static_cast<size_t>(p[i])]);
    return TypeInfo::tensor(t.elemType, s);
}

std::optional<std::vector<int64_t>> intValues(const Tensor& t) {
    const int64_t n = t.elementCount();
    std::vector<int64_t> v(static_cast<size_t>(n));
    if (t.dtype == DataType::Int64 && t.data.size() == static_cast<size_t>(n) * 8) {
        for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = t.as<int64_t>()[i];
        return v;
    }
    if (t.dtype == DataType::Int32 && t.data.size() == static_cast<size_t>(n) * 4) {
        for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = t.as<int32_t>()[i];
        return v;
    }
    return std::nullopt;
}

TensorPtr intTensor(DataType dtype, const std::vector<int64_t>& values) {
    const std::vector<int64_t> dims = {static_cast<int64_t>(values.size())};
    if (dtype == DataType::Int32) {
        std::vector<int32_t> narrow(values.begin(), values.end());
        return makeTensorOf(DataType::Int32, dims, narrow);
    }
    return makeTensorOf(DataType::Int64, dims, values);
}

}  // namespace passlens::passes::layoututil
