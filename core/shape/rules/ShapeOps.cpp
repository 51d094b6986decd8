// The shape-computation ops torch.onnx exports are full of: they move small integer tensors
// (shapes, indices, pads) around, so each rule computes both the output's dims and its elements.
#include <cstring>

#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

namespace {

/// Elements of a constant tensor attribute (Constant's value / value_int(s)).
std::optional<std::vector<Dim>> elementsOf(const ir::Tensor& t) {
    int64_t n = t.elementCount();
    if (n < 0 || static_cast<size_t>(n) > kMaxValueElements) return std::nullopt;
    if (t.dtype != DataType::Int64 && t.dtype != DataType::Int32) return std::nullopt;
    size_t es = ir::elementSize(t.dtype);
    if (t.data.size() != static_cast<size_t>(n) * es) return std::nullopt;
    std::vector<Dim> out;
    for (int64_t i = 0; i < n; ++i) {
        int64_t v = 0;
        if (es == 8) std::memcpy(&v, t.data.data() + i * 8, 8);
        else { int32_t x; std::memcpy(&x, t.data.data() + i * 4, 4); v = x; }
        out.push_back(DimExpr::constant(v));
    }
    return out;
}

void constantRule(RuleContext& c) {
    ValueShape& o = c.out(0);
    if (const ir::Attribute* a = c.node.attr("value"); a && a->t) {
        o = shapeOfTensor(*a->t);
    } else if (const ir::Attribute* vi = c.node.attr("value_int")) {
        setValues(o, DataType::Int64, {}, {DimExpr::constant(vi->i)});
    } else if (const ir::Attribute* vs = c.node.attr("value_ints")) {
        setValues(o, DataType::Int64, {DimExpr::constant(static_cast<int64_t>(vs->ints.size()))}, constDims(vs->ints));
    } else if (const ir::Attribute* f = c.node.attr("value_float")) {
        (void)f;
        o.dtype = DataType::Float;
        o.dims = std::vector<Dim>{};
    } else if (const ir::Attribute* fs = c.node.attr("value_floats")) {
        o.dtype = DataType::Float;
        o.dims = std::vector<Dim>{DimExpr::constant(static_cast<int64_t>(fs->floats.size()))};
    }
}

void shapeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    o.dtype = DataType::Int64;
    if (!x || !x->dims) return;
    int64_t rank = static_cast<int64_t>(x->dims->size());
    int64_t start = c.node.attrInt("start", 0), end = c.node.attrInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    std::vector<Dim> v;
    for (int64_t i = start; i < end; ++i) v.push_back((*x->dims)[static_cast<size_t>(i)]);
    setValues(o, DataType::Int64, {DimExpr::constant(static_cast<int64_t>(v.size()))}, v);
}

void sizeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    o.dtype = DataType::Int64;
    o.dims = std::vector<Dim>{};
    if (x && x->dims) o.values = std::vector<Dim>{product(*x->dims)};
}

/// The output dims a shape tensor (input `i`) describes, element by element.
std::optional<std::vector<Dim>> shapeFromValues(const RuleContext& c, size_t i) {
    const ValueShape* s = c.in(i);
    if (!s) return std::nullopt;
    if (s->values) return s->values;
    // Elements unknown but the count is known: the rank is (up to the length of a shape tensor the
    // engine tracks; a damaged file can declare 2^49 elements).
    if (s->dims && s->dims->size() == 1 && (*s->dims)[0] && (*s->dims)[0]->isConstant())
        if (int64_t rank = *(*s->dims)[0]->constantValue(); rank >= 0 && rank <= static_cast<int64_t>(kMaxValueElements))
            return std::vector<Dim>(static_cast<size_t>(rank), std::nullopt);
    return std::nullopt;
}

void constantOfShapeRule(RuleContext& c) {
    ValueShape& o = c.out(0);
    o.dtype = DataType::Float;
    DimExpr fill = DimExpr::constant(0);
    bool intFill = false;
    if (const ir::Attribute* a = c.node.attr("value"); a && a->t) {
        o.dtype = a->t->dtype;
        if (auto e = elementsOf(*a->t); e && e->size() == 1 && (*e)[0]) {
            fill = *(*e)[0];
            intFill = true;
        }
    }
    o.dims = shapeFromValues(c, 0);
    if (!o.dims) return;
    if (auto n = staticCount(*o.dims); n && intFill && *n <= static_cast<int64_t>(kMaxValueElements))
        o.values = std::vector<Dim>(static_cast<size_t>(*n), fill);
}

void rangeRule(RuleContext& c) {
    ValueShape& o = c.out(0);
    o.dtype = c.in(0) ? c.in(0)->dtype : DataType::Undefined;
    auto scalar = [&](size_t i) -> Dim {
        const ValueShape* s = c.in(i);
        if (!s || !s->values || s->values->size() != 1 || !isIntegerType(s->dtype)) return std::nullopt;
        return (*s->values)[0];
    };
    Dim start = scalar(0), limit = scalar(1), delta = scalar(2);
    Dim n;
    if (start && limit && delta && delta->isConstant() && *delta->constantValue() != 0) {
        // max(ceil((limit - start) / delta), 0)
        int64_t d = *delta->constantValue();
        DimExpr span = *limit - *start;
        DimExpr count = d > 0 ? floorDiv(span + DimExpr::constant(d - 1), DimExpr::constant(d))
                              : floorDiv(-span + DimExpr::constant(-d - 1), DimExpr::constant(-d));
        n = max(count, DimExpr::constant(0));
    }
    if (!n) n = c.fresh("Range length depends on values not known before running");
    o.dims = std::vector<Dim>{n};
    if (auto cnt = n->constantValue(); cnt && *cnt <= static_cast<int64_t>(kMaxValueElements) && start && delta) {
        std::vector<Dim> v;
        for (int64_t i = 0; i < *cnt; ++i) v.push_back(*start + DimExpr::constant(i) * *delta);
        o.values = v;
    }
}

void gatherRule(RuleContext& c) {
    const ValueShape* data = c.in(0);
    const ValueShape* idx = c.in(1);
    ValueShape& o = c.out(0);
    if (!data) return;
    o.dtype = data->dtype;
    if (!data->dims || !idx || !idx->dims) return;
    size_t rank = data->dims->size();
    auto axis = normAxis(c.node.attrInt("axis", 0), rank);
    if (!axis) throw std::runtime_error("Gather axis out of range");
    std::vector<Dim> dims(data->dims->begin(), data->dims->begin() + static_cast<long>(*axis));
    dims.insert(dims.end(), idx->dims->begin(), idx->dims->end());
    dims.insert(dims.end(), data->dims->begin() + static_cast<long>(*axis) + 1, data->dims->end());
    o.dims = dims;
    // Values: gathering from a 1-D value vector (the Shape -> Gather pattern).
    auto indices = c.constInts(1);
    auto dataDims = data->staticDims();
    if (!data->values || !indices || !dataDims || dataDims->size() != 1) return;
    int64_t n = (*dataDims)[0];
    std::vector<Dim> v;
    for (int64_t i : *indices) {
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw std::runtime_error("Gather index out of range");
        v.push_back((*data->values)[static_cast<size_t>(i)]);
    }
    o.values = v;
}

void unsqueezeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    auto axes = intsFromAttrOrInput(c, "axes", 1);
    if (!x->dims || !axes) return;
    size_t outRank = x->dims->size() + axes->size();
    std::vector<bool> inserted(outRank, false);
    for (int64_t a : *axes) {
        auto n = normAxis(a, outRank);
        if (!n) throw std::runtime_error("Unsqueeze axis out of range");
        if (inserted[*n]) throw std::runtime_error("Unsqueeze axes repeat an axis");
        inserted[*n] = true;
    }
    std::vector<Dim> dims;
    size_t k = 0;
    for (size_t i = 0; i < outRank; ++i) dims.push_back(inserted[i] ? Dim(DimExpr::constant(1)) : (*x->dims)[k++]);
    o.dims = dims;
    o.values = x->values;
}

void squeezeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    std::optional<std::vector<int64_t>> axes;
    if (c.node.attr("axes") || c.in(1)) {
        axes = intsFromAttrOrInput(c, "axes", 1);
        if (!axes) return;
    }
    size_t rank = x->dims->size();
    std::vector<bool> drop(rank, false);
    if (axes) {
        for (int64_t a : *axes) {
            auto n = normAxis(a, rank);
            if (!n) throw std::runtime_error("Squeeze axis out of range");
            drop[*n] = true;
        }
    } else {
        for (size_t i = 0; i < rank; ++i) {
            const Dim& d = (*x->dims)[i];
            if (!d) return;  // cannot tell whether it is 1
            if (d->isConstant()) drop[i] = *d->constantValue() == 1;
            else if (auto lb = d->lowerBound(); !lb || *lb < 2) return;
        }
    }
    std::vector<Dim> dims;
    for (size_t i = 0; i < rank; ++i)
        if (!drop[i]) dims.push_back((*x->dims)[i]);
    o.dims = dims;
    o.values = x->values;
}

void concatRule(RuleContext& c) {
    ValueShape& o = c.out(0);
    const ValueShape* first = nullptr;
    for (size_t i = 0; i < c.inputCount(); ++i)
        if (c.in(i) && c.in(i)->dims) { first = c.in(i); break; }
    if (c.in(0)) o.dtype = c.in(0)->dtype;
    if (!first) return;
    size_t rank = first->dims->size();
    auto axis = normAxis(c.node.attrInt("axis", 0), rank);
    if (!axis) throw std::runtime_error("Concat axis out of range");
    std::vector<Dim> dims = *first->dims;
    Dim total = DimExpr::constant(0);
    bool allValues = true;
    std::vector<Dim> values;
    for (size_t i = 0; i < c.inputCount(); ++i) {
        const ValueShape* s = c.in(i);
        if (!s || !s->dims || s->dims->size() != rank) { total.reset(); allValues = false; continue; }
        const Dim& d = (*s->dims)[*axis];
        total = (total && d) ? Dim(*total + *d) : std::nullopt;
        for (size_t k = 0; k < rank; ++k)
            if (k != *axis && !dims[k]) dims[k] = (*s->dims)[k];
        if (s->values && rank == 1) values.insert(values.end(), s->values->begin(), s->values->end());
        else allValues = false;
    }
    dims[*axis] = total;
    o.dims = dims;
    if (allValues) o.values = values;
}

void reshapeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    auto target = shapeFromValues(c, 1);
    if (!target) return;
    bool allowZero = c.node.attrInt("allowzero", 0) != 0;
    std::vector<Dim> dims = *target;
    std::optional<size_t> inferred;
    for (size_t i = 0; i < dims.size(); ++i) {
        Dim& d = dims[i];
        if (!d) continue;
        if (d->isConstant() && *d->constantValue() == 0 && !allowZero)
            d = (x->dims && i < x->dims->size()) ? (*x->dims)[i] : std::nullopt;
        else if (d->isConstant() && *d->constantValue() == -1) {
            inferred = i;
            d.reset();
        }
    }
    if (inferred && x->dims) {
        std::vector<Dim> others;
        for (size_t i = 0; i < dims.size(); ++i)
            if (i != *inferred) others.push_back(dims[i]);
        Dim total = product(*x->dims), known = product(others);
        if (total && known && !(known->isConstant() && *known->constantValue() == 0))
            dims[*inferred] = floorDiv(*total, *known);  // exact for a valid reshape
    }
    o.dims = dims;
    if (x->values && staticCount(dims) && staticCount(dims) == static_cast<int64_t>(x->values->size())) o.values = x->values;
}

void flattenRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    size_t rank = x->dims->size();
    int64_t axis = c.node.attrInt("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(rank);
    if (axis < 0 || axis > static_cast<int64_t>(rank)) throw std::runtime_error("Flatten axis out of range");
    auto mid = x->dims->begin() + axis;
    o.dims = std::vector<Dim>{product({x->dims->begin(), mid}), product({mid, x->dims->end()})};
    o.values = x->values;
}

void expandRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    auto target = shapeFromValues(c, 1);
    if (!target || !x->dims) return;
    ValueShape t;
    t.dims = *target;
    o.dims = broadcastShapes({x, &t});
    // Values of a broadcast small tensor (Expand of a scalar to a shape).
    if (o.dims && x->values)
        if (auto n = staticCount(*o.dims); n && *n <= static_cast<int64_t>(kMaxValueElements) && x->values->size() == 1)
            o.values = std::vector<Dim>(static_cast<size_t>(*n), (*x->values)[0]);
}

void tileRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    auto reps = shapeFromValues(c, 1);
    if (!x->dims || !reps || reps->size() != x->dims->size()) return;
    std::vector<Dim> dims;
    for (size_t i = 0; i < reps->size(); ++i) {
        const Dim& a = (*x->dims)[i];
        const Dim& r = (*reps)[i];
        dims.push_back(a && r ? Dim(*a * *r) : std::nullopt);
    }
    o.dims = dims;
    if (x->values && x->dims->size() == 1 && c.constInts(1)) {
        std::vector<Dim> v;
        for (int64_t k = 0; k < (*c.constInts(1))[0]; ++k) v.insert(v.end(), x->values->begin(), x->values->end());
        if (v.size() <= kMaxValueElements) o.values = v;
    }
}

void transposeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    size_t rank = x->dims->size();
    std::vector<int64_t> perm = c.node.attrInts("perm");
    if (perm.empty())
        for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
    if (perm.size() != rank) throw std::runtime_error("Transpose perm does not match the rank");
    std::vector<Dim> dims;
    for (int64_t p : perm) {
        auto a = normAxis(p, rank);
        if (!a) throw std::runtime_error("Transpose perm out of range");
        dims.push_back((*x->dims)[*a]);
    }
    o.dims = dims;
    // Values of a rank-2 tensor (F.pad's pads are reshaped to [n, 2], flipped and transposed).
    auto sd = x->staticDims();
    if (x->values && sd && rank == 2 && perm == std::vector<int64_t>{1, 0}) {
        std::vector<Dim> v;
        for (int64_t j = 0; j < (*sd)[1]; ++j)
            for (int64_t i = 0; i < (*sd)[0]; ++i) v.push_back((*x->values)[static_cast<size_t>(i * (*sd)[1] + j)]);
        o.values = v;
    } else if (x->values && sd && rank <= 1) {
        o.values = x->values;
    }
}

/// Slice of one axis: the length, and the first index when it is a constant.
struct AxisSlice {
    Dim length;
    std::optional<int64_t> first;
};

AxisSlice sliceAxis(const Dim& dim, const Dim& startDim, const Dim& endDim, int64_t step) {
    constexpr int64_t kBig = int64_t{1} << 31;  // exporters write INT64_MAX / INT32_MAX for "to the end"
    AxisSlice r;
    bool constIndices = startDim && startDim->isConstant() && endDim && endDim->isConstant();
    if (dim && dim->isConstant() && constIndices) {
        const int64_t start = *startDim->constantValue(), end = *endDim->constantValue();
        int64_t n = *dim->constantValue();
        auto clampIdx = [&](int64_t i, bool isEnd) {
            if (i < 0) i += n;
            if (step > 0) return std::clamp<int64_t>(i, 0, n);
            return std::clamp<int64_t>(i, isEnd ? -1 : 0, n - 1);
        };
        int64_t s = clampIdx(start, false), e = clampIdx(end, true);
        int64_t len = step > 0 ? (e > s ? (e - s + step - 1) / step : 0) : (s > e ? (s - e - step - 1) / -step : 0);
        r.length = DimExpr::constant(len);
        r.first = s;
        return r;
    }
    if (!dim || !startDim || !endDim || step <= 0) return r;  // symbolic reverse slices are left to the data
    DimExpr zero = DimExpr::constant(0);
    // An index clamped to [0, dim]; symbolic indices only when proven non-negative.
    auto bound = [&](const DimExpr& i) -> Dim {
        if (auto c = i.constantValue()) {
            if (*c >= kBig) return *dim;
            if (*c <= -kBig) return zero;
            if (*c < 0) return max(zero, *dim + i);
            return min(i, *dim);
        }
        if (auto lb = i.lowerBound(); lb && *lb >= 0) return min(i, *dim);
        return std::nullopt;
    };
    Dim s = bound(*startDim), e = bound(*endDim);
    if (!s || !e) return r;
    r.length = max(zero, floorDiv(*e - *s + DimExpr::constant(step - 1), DimExpr::constant(step)));
    return r;
}

/// Elements of a slice of a small tensor with static dims, axis by axis.
std::optional<std::vector<Dim>> sliceValues(const ValueShape& x, const std::vector<int64_t>& dims,
                                            const std::vector<std::vector<int64_t>>& picks) {
    std::vector<Dim> out;
    size_t rank = dims.size();
    std::vector<size_t> idx(rank, 0);
    size_t total = 1;
    for (const auto& p : picks) total *= p.size();
    if (total > kMaxValueElements) return std::nullopt;
    for (size_t flat = 0; flat < total; ++flat) {
        size_t rem = flat;
        int64_t src = 0, stride = 1;
        for (size_t a = rank; a-- > 0;) {
            size_t k = rem % picks[a].size();
            rem /= picks[a].size();
            src += picks[a][k] * stride;
            stride *= dims[a];
        }
        if (src < 0 || src >= static_cast<int64_t>(x.values->size())) return std::nullopt;
        out.push_back((*x.values)[static_cast<size_t>(src)]);
    }
    return out;
}

void sliceRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    size_t rank = x->dims->size();
    std::optional<std::vector<Dim>> starts, ends;
    std::optional<std::vector<int64_t>> axes, steps;
    if (c.node.attr("starts")) {  // opset < 10
        starts = constDims(c.node.attrInts("starts"));
        ends = constDims(c.node.attrInts("ends"));
        if (c.node.attr("axes")) axes = c.node.attrInts("axes");
    } else {
        if (c.in(1)) starts = c.in(1)->values;
        if (c.in(2)) ends = c.in(2)->values;
        if (c.in(3)) { axes = c.constInts(3); if (!axes) { o.dims = std::vector<Dim>(rank, std::nullopt); return; } }
        if (c.in(4)) { steps = c.constInts(4); if (!steps) { o.dims = std::vector<Dim>(rank, std::nullopt); return; } }
    }
    size_t n = starts ? starts->size() : (ends ? ends->size() : (axes ? axes->size() : 0));
    if (!axes && (!starts || !ends)) {
        o.dims = std::vector<Dim>(rank, std::nullopt);
        return;
    }
    if (!axes) {
        axes = std::vector<int64_t>();
        for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
    }
    n = axes->size();
    if (!steps) steps = std::vector<int64_t>(n, 1);
    if (!starts) starts = std::vector<Dim>(n, std::nullopt);
    if (!ends) ends = std::vector<Dim>(n, std::nullopt);
    if (starts->size() != n || ends->size() != n || steps->size() != n) throw std::runtime_error("Slice inputs differ in length");
    std::vector<Dim> dims = *x->dims;
    auto staticIn = x->staticDims();
    std::vector<std::vector<int64_t>> picks;
    if (staticIn)
        for (int64_t d : *staticIn) {
            picks.emplace_back();
            for (int64_t i = 0; i < d; ++i) picks.back().push_back(i);
        }
    bool valuesOk = x->values && staticIn;
    for (size_t k = 0; k < n; ++k) {
        auto a = normAxis((*axes)[k], rank);
        if (!a) throw std::runtime_error("Slice axis out of range");
        if ((*steps)[k] == 0) throw std::runtime_error("Slice step is 0");
        AxisSlice s = sliceAxis(dims[*a], (*starts)[k], (*ends)[k], (*steps)[k]);
        dims[*a] = s.length;
        if (valuesOk && s.length && s.length->isConstant() && s.first) {
            picks[*a].clear();
            for (int64_t i = 0; i < *s.length->constantValue(); ++i) picks[*a].push_back(*s.first + i * (*steps)[k]);
        } else {
            valuesOk = false;
        }
    }
    o.dims = dims;
    if (valuesOk) o.values = sliceValues(*x, *staticIn, picks);
}

void splitRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    if (!x) return;
    for (size_t i = 0; i < c.outputCount(); ++i) c.out(i).dtype = x->dtype;
    if (!x->dims) return;
    auto axis = normAxis(c.node.attrInt("axis", 0), x->dims->size());
    if (!axis) throw std::runtime_error("Split axis out of range");
    std::optional<std::vector<int64_t>> sizes;
    if (c.node.attr("split")) sizes = c.node.attrInts("split");
    else if (c.in(1)) {
        sizes = c.constInts(1);
        if (!sizes) return;
    }
    size_t n = c.outputCount();
    const Dim& d = (*x->dims)[*axis];
    for (size_t i = 0; i < n; ++i) {
        std::vector<Dim> dims = *x->dims;
        if (sizes) {
            if (sizes->size() != n) throw std::runtime_error("Split sizes do not match the outputs");
            dims[*axis] = DimExpr::constant((*sizes)[i]);
        } else if (!d) {
            dims[*axis].reset();
        } else {
            // Equal parts; the last is smaller when the dim does not divide (opset 18).
            DimExpr part = floorDiv(*d + DimExpr::constant(static_cast<int64_t>(n) - 1), DimExpr::constant(static_cast<int64_t>(n)));
            dims[*axis] = i + 1 < n ? part : *d - DimExpr::constant(static_cast<int64_t>(n) - 1) * part;
        }
        c.out(i).dims = dims;
    }
}

void gatherElementsRule(RuleContext& c) {
    if (!c.in(0) || !c.in(1)) return;
    c.out(0).dtype = c.in(0)->dtype;
    c.out(0).dims = c.in(1)->dims;
}

}  // namespace

void addShapeOpRules(RuleTable& t) {
    t["Constant"] = constantRule;
    t["Shape"] = shapeRule;
    t["Size"] = sizeRule;
    t["ConstantOfShape"] = constantOfShapeRule;
    t["Range"] = rangeRule;
    t["Gather"] = gatherRule;
    t["GatherElements"] = gatherElementsRule;
    t["Unsqueeze"] = unsqueezeRule;
    t["Squeeze"] = squeezeRule;
    t["Concat"] = concatRule;
    t["Reshape"] = reshapeRule;
    t["Flatten"] = flattenRule;
    t["Expand"] = expandRule;
    t["Tile"] = tileRule;
    t["Transpose"] = transposeRule;
    t["Slice"] = sliceRule;
    t["Split"] = splitRule;
}

}  // namespace passlens::shape
