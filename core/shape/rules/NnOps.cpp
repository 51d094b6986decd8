// Compute ops of CNN and transformer exports: MatMul/Gemm, convolutions and pools (floor
// arithmetic on symbols), Resize, Pad, space/depth moves, and the data-dependent ops whose sizes
// get fresh symbols.
#include <cmath>

#include "shape/Rules.h"

namespace passlens::shape {

using ir::DataType;

namespace {

DimExpr c64(int64_t v) { return DimExpr::constant(v); }

void matmulRule(RuleContext& c) {
    const ValueShape* a = c.in(0);
    const ValueShape* b = c.in(1);
    ValueShape& o = c.out(0);
    if (!a || !b) return;
    o.dtype = a->dtype;
    if (!a->dims || !b->dims || a->dims->empty() || b->dims->empty()) return;
    std::vector<Dim> da = *a->dims, db = *b->dims;
    bool vecA = da.size() == 1, vecB = db.size() == 1;
    if (vecA) da.insert(da.begin(), c64(1));
    if (vecB) db.push_back(c64(1));
    ValueShape ba, bb;
    ba.dims = std::vector<Dim>(da.begin(), da.end() - 2);
    bb.dims = std::vector<Dim>(db.begin(), db.end() - 2);
    auto batch = broadcastShapes({&ba, &bb});
    if (!batch) return;
    std::vector<Dim> dims = *batch;
    if (!vecA) dims.push_back(da[da.size() - 2]);
    if (!vecB) dims.push_back(db.back());
    o.dims = dims;
}

void gemmRule(RuleContext& c) {
    const ValueShape* a = c.in(0);
    const ValueShape* b = c.in(1);
    ValueShape& o = c.out(0);
    if (!a || !b) return;
    o.dtype = a->dtype;
    if (!a->dims || !b->dims || a->dims->size() != 2 || b->dims->size() != 2) return;
    bool ta = c.node.attrInt("transA", 0) != 0, tb = c.node.attrInt("transB", 0) != 0;
    o.dims = std::vector<Dim>{(*a->dims)[ta ? 1 : 0], (*b->dims)[tb ? 0 : 1]};
}

/// Spatial output dims of Conv and the pools, per ONNX's formulas (floor, or ceil with ceil_mode).
std::optional<std::vector<Dim>> windowedDims(const RuleContext& c, const std::vector<Dim>& spatial,
                                             const std::vector<int64_t>& kernel) {
    size_t n = spatial.size();
    if (kernel.size() != n) return std::nullopt;
    std::vector<int64_t> strides = c.node.attrInts("strides", std::vector<int64_t>(n, 1));
    std::vector<int64_t> dil = c.node.attrInts("dilations", std::vector<int64_t>(n, 1));
    std::vector<int64_t> pads = c.node.attrInts("pads", std::vector<int64_t>(2 * n, 0));
    std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
    bool ceilMode = c.node.attrInt("ceil_mode", 0) != 0;
    if (strides.size() != n || dil.size() != n || pads.size() != 2 * n) return std::nullopt;
    std::vector<Dim> out;
    for (size_t i = 0; i < n; ++i) {
        const Dim& x = spatial[i];
        if (!x || strides[i] <= 0) { out.push_back(std::nullopt); continue; }
        DimExpr s = c64(strides[i]);
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            out.push_back(floorDiv(*x + c64(strides[i] - 1), s));  // ceil(x / stride)
            continue;
        }
        int64_t padSum = autoPad == "VALID" ? 0 : pads[i] + pads[i + n];
        int64_t effK = dil[i] * (kernel[i] - 1) + 1;
        DimExpr span = *x + c64(padSum - effK);
        DimExpr steps = ceilMode ? floorDiv(span + c64(strides[i] - 1), s) : floorDiv(span, s);
        out.push_back(steps + c64(1));
    }
    return out;
}

void convRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    const ValueShape* w = c.in(1);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims || x->dims->size() < 3 || !w || !w->dims || w->dims->size() != x->dims->size()) return;
    std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
    if (kernel.empty()) {
        for (size_t i = 2; i < w->dims->size(); ++i) {
            const Dim& d = (*w->dims)[i];
            if (!d || !d->isConstant()) return;
            kernel.push_back(*d->constantValue());
        }
    }
    std::vector<Dim> spatial(x->dims->begin() + 2, x->dims->end());
    auto sp = windowedDims(c, spatial, kernel);
    if (!sp) return;
    std::vector<Dim> dims{(*x->dims)[0], (*w->dims)[0]};
    dims.insert(dims.end(), sp->begin(), sp->end());
    o.dims = dims;
}

void poolRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    if (!x) return;
    for (size_t i = 0; i < c.outputCount(); ++i) c.out(i).dtype = i == 0 ? x->dtype : DataType::Int64;
    if (!x->dims || x->dims->size() < 3) return;
    std::vector<Dim> spatial(x->dims->begin() + 2, x->dims->end());
    auto sp = windowedDims(c, spatial, c.node.attrInts("kernel_shape"));
    if (!sp) return;
    std::vector<Dim> dims{(*x->dims)[0], (*x->dims)[1]};
    dims.insert(dims.end(), sp->begin(), sp->end());
    for (size_t i = 0; i < c.outputCount(); ++i) c.out(i).dims = dims;
}

void globalPoolRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    if (!x) return;
    c.out(0).dtype = x->dtype;
    if (!x->dims || x->dims->size() < 2) return;
    std::vector<Dim> dims{(*x->dims)[0], (*x->dims)[1]};
    dims.resize(x->dims->size(), c64(1));
    c.out(0).dims = dims;
}

void convTransposeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    const ValueShape* w = c.in(1);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims || x->dims->size() < 3 || !w || !w->dims || w->dims->size() != x->dims->size()) return;
    size_t n = x->dims->size() - 2;
    int64_t group = c.node.attrInt("group", 1);
    Dim channels = (*w->dims)[1] ? Dim(*(*w->dims)[1] * c64(group)) : std::nullopt;
    std::vector<Dim> dims{(*x->dims)[0], channels};
    std::vector<int64_t> outShape = c.node.attrInts("output_shape");
    if (!outShape.empty()) {
        if (outShape.size() != n) return;
        for (int64_t d : outShape) dims.push_back(c64(d));
        o.dims = dims;
        return;
    }
    std::vector<int64_t> kernel = c.node.attrInts("kernel_shape");
    if (kernel.empty())
        for (size_t i = 2; i < w->dims->size(); ++i) {
            const Dim& d = (*w->dims)[i];
            if (!d || !d->isConstant()) return;
            kernel.push_back(*d->constantValue());
        }
    std::vector<int64_t> strides = c.node.attrInts("strides", std::vector<int64_t>(n, 1));
    std::vector<int64_t> dil = c.node.attrInts("dilations", std::vector<int64_t>(n, 1));
    std::vector<int64_t> pads = c.node.attrInts("pads", std::vector<int64_t>(2 * n, 0));
    std::vector<int64_t> outPad = c.node.attrInts("output_padding", std::vector<int64_t>(n, 0));
    std::string autoPad = c.node.attrString("auto_pad", "NOTSET");
    if (kernel.size() != n || strides.size() != n || dil.size() != n || pads.size() != 2 * n || outPad.size() != n) return;
    for (size_t i = 0; i < n; ++i) {
        const Dim& d = (*x->dims)[i + 2];
        if (!d) { dims.push_back(std::nullopt); continue; }
        if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") { dims.push_back(*d * c64(strides[i])); continue; }
        int64_t padSum = autoPad == "VALID" ? 0 : pads[i] + pads[i + n];
        dims.push_back(c64(strides[i]) * (*d - c64(1)) + c64(outPad[i] + (kernel[i] - 1) * dil[i] + 1 - padSum));
    }
    o.dims = dims;
}

/// One resized dim: floor(dim * scale), kept symbolic when the scale is an integer or 1/integer.
Dim scaledDim(const Dim& d, double scale) {
    if (!d || !(scale > 0)) return std::nullopt;
    if (auto c = d->constantValue()) return c64(static_cast<int64_t>(std::floor(static_cast<double>(*c) * scale)));
    double r = std::round(scale);
    if (r >= 1 && std::fabs(scale - r) < 1e-6 * r) return *d * c64(static_cast<int64_t>(r));
    double inv = std::round(1.0 / scale);
    // 1/scale is exact in float for powers of two only; other reciprocals may round either way.
    if (inv >= 1 && 1.0 / inv == scale) return floorDiv(*d, c64(static_cast<int64_t>(inv)));
    return std::nullopt;
}

/// Resize (sizes, or constant scales) and Upsample.
void resizeRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    size_t rank = x->dims->size();
    if (const ValueShape* sizes = c.in(3); sizes && sizes->values && sizes->values->size() == rank) {
        o.dims = sizes->values;
        return;
    }
    o.dims = std::vector<Dim>(rank, std::nullopt);
    // scales: input 2 (opset >= 11), input 1 (Resize-10, Upsample-9), or Upsample's attribute.
    std::optional<std::vector<double>> scales;
    if (const ir::Attribute* a = c.node.attr("scales")) scales = std::vector<double>(a->floats.begin(), a->floats.end());
    else if (const ValueShape* s = c.in(c.node.opType == "Resize" && c.inputCount() >= 3 ? 2 : 1); s && s->reals) scales = s->reals;
    if (!scales || scales->size() != rank || c.node.attr("axes")) return;
    for (size_t i = 0; i < rank; ++i) (*o.dims)[i] = scaledDim((*x->dims)[i], (*scales)[i]);
}

void padRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims) return;
    size_t rank = x->dims->size();
    std::optional<std::vector<Dim>> pads;
    if (const ir::Attribute* a = c.node.attr("pads")) pads = constDims(a->ints);
    else if (c.in(1) && c.in(1)->values) pads = c.in(1)->values;
    std::optional<std::vector<int64_t>> axes;
    if (c.in(3)) {
        axes = c.constInts(3);
        if (!axes) return;
    }
    std::vector<size_t> axisList;
    if (axes)
        for (int64_t a : *axes) {
            auto n = normAxis(a, rank);
            if (!n) throw std::runtime_error("Pad axis out of range");
            axisList.push_back(*n);
        }
    else
        for (size_t i = 0; i < rank; ++i) axisList.push_back(i);
    std::vector<Dim> dims = *x->dims;
    if (!pads || pads->size() != 2 * axisList.size()) {
        for (size_t a : axisList) dims[a].reset();
        o.dims = dims;
        return;
    }
    size_t n = axisList.size();
    for (size_t k = 0; k < n; ++k) {
        Dim& d = dims[axisList[k]];
        const Dim& lo = (*pads)[k];
        const Dim& hi = (*pads)[k + n];
        d = (d && lo && hi) ? Dim(*d + *lo + *hi) : std::nullopt;
    }
    o.dims = dims;
}

void depthToSpaceRule(RuleContext& c, bool toSpace) {
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    if (!x) return;
    o.dtype = x->dtype;
    if (!x->dims || x->dims->size() != 4) return;
    int64_t b = c.node.attrInt("blocksize", 1);
    if (b <= 0) return;
    const auto& d = *x->dims;
    auto scale = [&](const Dim& v, bool up) -> Dim {
        if (!v) return std::nullopt;
        return up ? *v * c64(b) : floorDiv(*v, c64(b));
    };
    auto chan = [&](const Dim& v, bool up) -> Dim {
        if (!v) return std::nullopt;
        return up ? *v * c64(b * b) : floorDiv(*v, c64(b * b));
    };
    o.dims = std::vector<Dim>{d[0], chan(d[1], !toSpace), scale(d[2], toSpace), scale(d[3], toSpace)};
}

void dataDependentRule(RuleContext& c, const std::string& what) {
    // Rank is fixed by the op; the varying dim becomes a fresh symbol.
    const ValueShape* x = c.in(0);
    ValueShape& o = c.out(0);
    const std::string& op = c.node.opType;
    if (op == "NonZero") {
        o.dtype = DataType::Int64;
        Dim rank = (x && x->dims) ? Dim(c64(static_cast<int64_t>(x->dims->size()))) : std::nullopt;
        o.dims = std::vector<Dim>{rank, c.fresh(what)};
    } else if (op == "NonMaxSuppression") {
        o.dtype = DataType::Int64;
        o.dims = std::vector<Dim>{c.fresh(what), c64(3)};
    } else if (op == "Compress") {
        if (!x) return;
        o.dtype = x->dtype;
        if (!c.node.attr("axis")) {
            o.dims = std::vector<Dim>{c.fresh(what)};
            return;
        }
        if (!x->dims) return;
        auto axis = normAxis(c.node.attrInt("axis", 0), x->dims->size());
        if (!axis) throw std::runtime_error("Compress axis out of range");
        std::vector<Dim> dims = *x->dims;
        dims[*axis] = c.fresh(what);
        o.dims = dims;
    }
}

void topKRule(RuleContext& c) {
    const ValueShape* x = c.in(0);
    if (!x) return;
    c.out(0).dtype = x->dtype;
    if (c.outputCount() > 1) c.out(1).dtype = DataType::Int64;
    if (!x->dims) return;
    auto axis = normAxis(c.node.attrInt("axis", -1), x->dims->size());
    if (!axis) throw std::runtime_error("TopK axis out of range");
    Dim k;
    if (const ir::Attribute* a = c.node.attr("k")) k = c64(a->i);
    else if (c.in(1) && c.in(1)->values && c.in(1)->values->size() == 1) k = (*c.in(1)->values)[0];
    if (!k) k = c.fresh("TopK's k is computed at run time");
    std::vector<Dim> dims = *x->dims;
    dims[*axis] = k;
    for (size_t i = 0; i < c.outputCount(); ++i) c.out(i).dims = dims;
}

}  // namespace

void addNnRules(RuleTable& t) {
    t["MatMul"] = matmulRule;
    t["Gemm"] = gemmRule;
    t["Conv"] = convRule;
    t["ConvTranspose"] = convTransposeRule;
    for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) t[op] = poolRule;
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) t[op] = globalPoolRule;
    t["Resize"] = resizeRule;
    t["Upsample"] = resizeRule;
    t["Pad"] = padRule;
    t["DepthToSpace"] = [](RuleContext& c) { depthToSpaceRule(c, true); };
    t["SpaceToDepth"] = [](RuleContext& c) { depthToSpaceRule(c, false); };
    t["NonZero"] = [](RuleContext& c) { dataDependentRule(c, "number of non-zero elements"); };
    t["NonMaxSuppression"] = [](RuleContext& c) { dataDependentRule(c, "number of boxes kept"); };
    t["Compress"] = [](RuleContext& c) { dataDependentRule(c, "number of elements the condition keeps"); };
    t["TopK"] = topKRule;
}

}  // namespace passlens::shape
