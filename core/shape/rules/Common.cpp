// Helpers shared by the rule files.
#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

bool isIntegerType(DataType t) {
    switch (t) {
    case DataType::Int64: case DataType::Int32: case DataType::Int16: case DataType::Int8:
    case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::Bool:
        return true;
    default: return false;
    }
}

Dim product(const std::vector<Dim>& dims) {
    DimExpr p = DimExpr::constant(1);
    for (const Dim& d : dims) {
        if (!d) return std::nullopt;
        p = p * *d;
    }
    return p;
}

std::optional<int64_t> staticCount(const std::vector<Dim>& dims) {
    int64_t n = 1;
    for (const Dim& d : dims) {
        if (!d || !d->isConstant() || *d->constantValue() < 0) return std::nullopt;
        if (__builtin_mul_overflow(n, *d->constantValue(), &n)) return std::nullopt;
    }
    return n;
}

std::vector<Dim> constDims(const std::vector<int64_t>& dims) {
    std::vector<Dim> out;
    out.reserve(dims.size());
    for (int64_t d : dims) out.push_back(DimExpr::constant(d));
    return out;
}

std::optional<size_t> normAxis(int64_t axis, size_t rank) {
    int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) return std::nullopt;
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

Dim broadcastDim(const Dim& a, const Dim& b) {
    auto isOne = [](const Dim& d) { return d && d->isConstant() && *d->constantValue() == 1; };
    if (isOne(a)) return b;
    if (isOne(b)) return a;
    if (a && b) return max(*a, *b);  // valid broadcasting: equal, or one side is 1
    // One side unknown: the other wins when it cannot be 1 (then the unknown is 1 or equal to it).
    const Dim& k = a ? a : b;
    if (k) {
        auto lb = k->lowerBound();
        if (lb && *lb >= 2) return k;
    }
    return std::nullopt;
}

std::optional<std::vector<Dim>> broadcastShapes(const std::vector<const ValueShape*>& ins) {
    size_t rank = 0;
    for (const ValueShape* s : ins) {
        if (!s || !s->dims) return std::nullopt;
        rank = std::max(rank, s->dims->size());
    }
    std::vector<Dim> out(rank, DimExpr::constant(1));
    for (const ValueShape* s : ins) {
        size_t off = rank - s->dims->size();
        for (size_t i = 0; i < s->dims->size(); ++i) out[off + i] = broadcastDim(out[off + i], (*s->dims)[i]);
    }
    return out;
}

std::optional<std::vector<int64_t>> intsFromAttrOrInput(const RuleContext& c, const char* attr, size_t input) {
    if (const ir::Attribute* a = c.node.attr(attr)) return a->ints;
    if (c.in(input)) return c.constInts(input);
    return std::nullopt;
}

void setValues(ValueShape& out, DataType t, std::vector<Dim> dims, std::vector<Dim> values) {
    out.dtype = t;
    out.dims = std::move(dims);
    if (values.size() <= kMaxValueElements) out.values = std::move(values);
}

}  // namespace passlens::shape
