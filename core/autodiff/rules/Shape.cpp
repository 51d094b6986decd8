// Gradients of data-movement ops: reshapes, Transpose, Concat/Split, Slice and Gather.
#include <algorithm>
#include <numeric>

#include "autodiff/GradientBuilder.h"
#include "ir/Tensor.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// Reshape, Flatten, Squeeze, Unsqueeze: the gradient takes the input's shape back.
void reshapeGrad(GradContext& c) { c.setGradIn(0, c.reshapeLike(c.gradOut(0), c.input(0))); }

void transposeGrad(GradContext& c) {
    const int64_t r = c.rank(c.input(0));
    std::vector<int64_t> perm = c.node().attrInts("perm");
    if (perm.empty()) {
        perm.resize(size_t(r));
        std::iota(perm.rbegin(), perm.rend(), 0);
    }
    std::vector<int64_t> inverse(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inverse[size_t(perm[i])] = int64_t(i);
    c.setGradIn(0, c.op("Transpose", {c.gradOut(0)}, {Attribute::makeInts("perm", inverse)}));
}

void concatGrad(GradContext& c) {
    // Each input's gradient is its slice of g along the axis; offsets are constants when the
    // lengths are static, else running sums of Shape dims computed when the graph runs.
    int64_t axis = c.node().attrInt("axis", 0);
    if (axis < 0) axis += c.rank(c.output(0));
    bool fixed = true;
    for (size_t i = 0; i < c.inputCount(); ++i) {
        auto s = c.staticShape(c.input(i));
        fixed = fixed && s && int64_t(s->size()) > axis;
    }
    if (fixed) {
        int64_t offset = 0;
        for (size_t i = 0; i < c.inputCount(); ++i) {
            const int64_t len = (*c.staticShape(c.input(i)))[size_t(axis)];
            if (c.needsGrad(i))
                c.setGradIn(i, c.op("Slice", {c.gradOut(0), c.ints({offset}, "starts"), c.ints({offset + len}, "ends"),
                                              c.ints({axis}, "axes")}));
            offset += len;
        }
        return;
    }
    ValueId offset = c.ints({0}, "starts");
    for (size_t i = 0; i < c.inputCount(); ++i) {
        ValueId end = c.op("Add", {offset, c.shapeDims(c.input(i), axis, axis + 1)});
        if (c.needsGrad(i)) c.setGradIn(i, c.op("Slice", {c.gradOut(0), offset, end, c.ints({axis}, "axes")}));
        offset = end;
    }
}

void splitGrad(GradContext& c) {
    // Concatenate the outputs' gradients (zeros for outputs nothing differentiates).
    int64_t axis = c.node().attrInt("axis", 0);
    if (axis < 0) axis += c.rank(c.input(0));
    std::vector<ValueId> parts;
    for (size_t i = 0; i < c.node().outputs.size(); ++i) parts.push_back(c.gradOutOrZeros(i));
    c.setGradIn(0, c.op("Concat", parts, {Attribute::makeInt("axis", axis)}));
}

/// The flat index (row-major) of every element of `x`, shaped like `x`: Range over Size(x),
/// reshaped at run time, so it works for symbolic dims.
ValueId flatIndexGrid(GradContext& c, ValueId x) {
    ValueId n = c.op("Size", {x});
    ValueId iota = c.op("Range", {c.int64Scalar(0), n, c.int64Scalar(1)});
    return c.op("Reshape", {iota, c.shapeOf(x)});
}

/// g scattered into zeros of x's shape at the flat indices `picked` (same shape as g, no repeats).
ValueId scatterFlat(GradContext& c, ValueId x, ValueId picked, ValueId g) {
    ValueId n = c.op("Reshape", {c.op("Size", {x}), c.ints({1}, "one")});
    ValueId zeros = c.op("ConstantOfShape", {n}, {Attribute::makeTensor("value", floatTensorOf(c.floatType(), {1}, {0.0}))});
    ValueId flatIdx = c.op("Reshape", {picked, c.ints({-1}, "flat")});
    ValueId scattered = c.op("ScatterElements", {zeros, flatIdx, c.op("Reshape", {g, c.ints({-1}, "flat")})},
                             {Attribute::makeInt("axis", 0)});
    return c.op("Reshape", {scattered, c.shapeOf(x)});
}

void sliceGradComputed(GradContext& c) {
    // Bounds the graph computes, or symbolic dims: slice the flat index grid of x the same way
    // (the forward node's own starts/ends/axes/steps) and scatter g to the indices it picked.
    if (c.opset() < 10) c.unsupported("Slice before opset 10 with symbolic dims");
    std::vector<ValueId> inputs{flatIndexGrid(c, c.input(0))};
    for (size_t i = 1; i < c.inputCount(); ++i) inputs.push_back(c.input(i));
    ValueId picked = c.op("Slice", inputs);
    c.setGradIn(0, scatterFlat(c, c.input(0), picked, c.gradOut(0)));
}

void sliceGrad(GradContext& c) {
    // Step 1 on every axis: pad g back with zeros. Other steps: scatter g into zeros by the flat
    // index of every element the slice read.
    const auto staticDims = c.staticShape(c.input(0));
    auto starts = c.constantInts(c.input(1)), ends = c.constantInts(c.input(2));
    const bool constAxes = c.input(3) == kNone || c.constantInts(c.input(3));
    const bool constSteps = c.inputCount() < 5 || c.input(4) == kNone || c.constantInts(c.input(4));
    if (!staticDims || !starts || !ends || !constAxes || !constSteps) return sliceGradComputed(c);
    const auto dims = *staticDims;
    const int64_t r = int64_t(dims.size());
    std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (c.input(3) != kNone) axes = *c.constantInts(c.input(3));
    if (c.inputCount() >= 5 && c.input(4) != kNone) steps = *c.constantInts(c.input(4));
    // Per axis: first index, step and count (ONNX clamping rules).
    std::vector<int64_t> first(size_t(r), 0), step(size_t(r), 1), count(dims);
    for (size_t k = 0; k < axes.size(); ++k) {
        const size_t a = size_t(normalized(axes[k], r));
        const int64_t d = dims[a], s = steps[k];
        if (s == 0) c.unsupported("a step of 0");
        int64_t b = (*starts)[k], e = (*ends)[k];
        if (b < 0) b += d;
        if (e < 0) e += d;
        if (s > 0) {
            b = std::clamp<int64_t>(b, 0, d);
            e = std::clamp<int64_t>(e, 0, d);
            count[a] = std::max<int64_t>(0, (e - b + s - 1) / s);
        } else {
            b = std::clamp<int64_t>(b, 0, d - 1);
            e = std::clamp<int64_t>(e, -1, d - 1);
            count[a] = std::max<int64_t>(0, (b - e - s - 1) / -s);
        }
        first[a] = b;
        step[a] = s;
    }
    const ValueId g = c.gradOut(0);
    if (std::all_of(step.begin(), step.end(), [](int64_t s) { return s == 1; })) {
        std::vector<int64_t> pads(static_cast<size_t>(2 * r));
        for (int64_t a = 0; a < r; ++a) {
            pads[size_t(a)] = first[size_t(a)];
            pads[size_t(r + a)] = dims[size_t(a)] - first[size_t(a)] - count[size_t(a)];
        }
        c.setGradIn(0, c.op("Pad", {g, c.ints(pads, "pads")}));
        return;
    }
    const int64_t n = std::accumulate(count.begin(), count.end(), int64_t{1}, std::multiplies<>());
    std::vector<int64_t> flat(static_cast<size_t>(n)), idx(size_t(r), 0), strides(size_t(r), 1);
    for (int64_t a = r - 2; a >= 0; --a) strides[size_t(a)] = strides[size_t(a + 1)] * dims[size_t(a + 1)];
    for (int64_t e = 0; e < n; ++e) {
        int64_t off = 0;
        for (int64_t a = 0; a < r; ++a) off += (first[size_t(a)] + idx[size_t(a)] * step[size_t(a)]) * strides[size_t(a)];
        flat[size_t(e)] = off;
        for (int64_t a = r - 1; a >= 0; --a) {
            if (++idx[size_t(a)] < count[size_t(a)]) break;
            idx[size_t(a)] = 0;
        }
    }
    const int64_t total = std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
    ValueId zeros = c.zeros({total});
    ValueId scattered = c.op("ScatterElements", {zeros, c.ints(flat, "flat_indices"), c.reshape(g, {n})},
                             {Attribute::makeInt("axis", 0)});
    c.setGradIn(0, c.reshape(scattered, dims));
}

void gatherGrad(GradContext& c) {
    // data [P, D, Q] gathered along D by indices of n elements: dx[p, d, q] = Σᵢ [idx i = d]·g[p, i, q],
    // a MatMul of the one-hot of the indices (transposed) with g; repeated indices add up. P, D
    // and n come from Shape/Size when the graph runs, so symbolic dims and computed indices work.
    const ValueId x = c.input(0), idx = c.input(1);
    int64_t axis = c.node().attrInt("axis", 0);
    if (axis < 0) axis += c.rank(x);
    ValueId lead = axis == 0 ? c.ints({1}, "one")
                             : axis == 1 ? c.shapeDims(x, 0, 1)
                                         : c.op("ReduceProd", {c.shapeDims(x, 0, axis)}, {Attribute::makeInt("keepdims", 1)});
    ValueId depth = c.shapeDims(x, axis, axis + 1);
    ValueId count = c.op("Reshape", {c.op("Size", {idx}), c.ints({1}, "one")});
    ValueId g3 = c.op("Reshape", {c.gradOut(0), c.op("Concat", {lead, count, c.ints({-1}, "rest")}, {Attribute::makeInt("axis", 0)})});
    ValueId values = c.floats({2}, {0.0, 1.0}, "off_on");
    ValueId flatIdx = c.op("Reshape", {idx, c.ints({-1}, "flat")});
    ValueId picks = c.op("OneHot", {flatIdx, depth, values}, {Attribute::makeInt("axis", 0)});
    ValueId summed = c.op("MatMul", {picks, g3});
    c.setGradIn(0, c.reshapeLike(summed, x));
}

void padGrad(GradContext& c) {
    // Constant padding: the gradient is g with the padding cut off, i.e. Pad by the negated pads
    // (a negative pad crops; where the forward cropped, the negated pad restores zeros).
    if (c.node().attrString("mode", "constant") != "constant")
        c.unsupported("only mode 'constant' is differentiated (reflect/edge/wrap add several gradients into one element)");
    if (c.opset() < 11) {
        auto pads = c.node().attrInts("pads");
        for (auto& p : pads) p = -p;
        c.setGradIn(0, c.op("Pad", {c.gradOut(0)}, {Attribute::makeInts("pads", pads)}));
        return;
    }
    ValueId negated = c.op("Neg", {c.input(1)});
    std::vector<ValueId> inputs{c.gradOut(0), negated};
    if (c.inputCount() >= 4 && c.input(3) != kNone) inputs.insert(inputs.end(), {kNone, c.input(3)});
    c.setGradIn(0, c.op("Pad", inputs));
}

void tileGrad(GradContext& c) {
    // y[r0, d0, r1, d1, ...] viewed with each repeat as its own axis: sum those axes.
    const ValueId x = c.input(0);
    const int64_t r = c.rank(x);
    auto repeats = c.constantInts(c.input(1));
    if (!repeats) c.unsupported("repeats must be a constant");
    std::vector<ValueId> parts;
    std::vector<int64_t> repeatAxes;
    for (int64_t a = 0; a < r; ++a) {
        parts.push_back(c.ints({(*repeats)[size_t(a)]}, "repeat"));
        parts.push_back(c.shapeDims(x, a, a + 1));
        repeatAxes.push_back(2 * a);
    }
    ValueId split = c.op("Reshape", {c.gradOut(0), c.op("Concat", parts, {Attribute::makeInt("axis", 0)})});
    c.setGradIn(0, c.reduceSum(split, repeatAxes, false));
}

}  // namespace

void registerShapeGradients(GradientRegistry& r) {
    r.add("Reshape", reshapeGrad, {1});
    r.add("Flatten", reshapeGrad);
    r.add("Squeeze", reshapeGrad, {1});
    r.add("Unsqueeze", reshapeGrad, {1});
    r.add("Transpose", transposeGrad);
    r.add("Concat", concatGrad);
    r.add("Split", splitGrad, {1});
    r.add("Slice", sliceGrad, {1, 2, 3, 4});
    r.add("Gather", gatherGrad, {1});
    r.add("Pad", padGrad, {1, 2, 3});
    r.add("Tile", tileGrad, {1});
}

}  // namespace passlens::autodiff
