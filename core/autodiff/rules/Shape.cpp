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
    // Each input's gradient is its slice of g along the axis.
    const int64_t r = c.rank(c.output(0));
    const int64_t axis = normalized(c.node().attrInt("axis", 0), r);
    int64_t offset = 0;
    for (size_t i = 0; i < c.inputCount(); ++i) {
        const int64_t len = c.requireStaticShape(c.input(i), "Concat offsets")[size_t(axis)];
        if (c.needsGrad(i))
            c.setGradIn(i, c.op("Slice", {c.gradOut(0), c.ints({offset}, "starts"), c.ints({offset + len}, "ends"),
                                          c.ints({axis}, "axes")}));
        offset += len;
    }
}

void splitGrad(GradContext& c) {
    // Concatenate the outputs' gradients (zeros for outputs nothing differentiates).
    const int64_t axis = normalized(c.node().attrInt("axis", 0), c.rank(c.input(0)));
    std::vector<ValueId> parts;
    for (size_t i = 0; i < c.node().outputs.size(); ++i) parts.push_back(c.gradOutOrZeros(i));
    c.setGradIn(0, c.op("Concat", parts, {Attribute::makeInt("axis", axis)}));
}

void sliceGrad(GradContext& c) {
    // Step 1 on every axis: pad g back with zeros. Other steps: scatter g into zeros by the flat
    // index of every element the slice read.
    const auto dims = c.requireStaticShape(c.input(0), "Slice bounds");
    const int64_t r = int64_t(dims.size());
    auto starts = c.constantInts(c.input(1)), ends = c.constantInts(c.input(2));
    if (!starts || !ends) c.unsupported("starts and ends must be constants");
    std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (c.input(3) != kNone) {
        auto a = c.constantInts(c.input(3));
        if (!a) c.unsupported("axes must be a constant");
        axes = *a;
    }
    if (c.input(4) != kNone) {
        auto s = c.constantInts(c.input(4));
        if (!s) c.unsupported("steps must be a constant");
        steps = *s;
    }
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
    // a MatMul of the one-hot of the indices (transposed) with g; repeated indices add up.
    const auto dd = c.requireStaticShape(c.input(0), "Gather sizes");
    const auto id = c.requireStaticShape(c.input(1), "Gather sizes");
    const int64_t r = int64_t(dd.size());
    const int64_t axis = normalized(c.node().attrInt("axis", 0), r);
    auto prod = [](auto b, auto e) { return std::accumulate(b, e, int64_t{1}, std::multiplies<>()); };
    const int64_t P = prod(dd.begin(), dd.begin() + axis), D = dd[size_t(axis)], Q = prod(dd.begin() + axis + 1, dd.end());
    const int64_t n = prod(id.begin(), id.end());
    ValueId values = c.floats({2}, {0.0, 1.0}, "off_on");
    ValueId oneHot = c.op("OneHot", {c.input(1), c.ints({D}, "depth"), values}, {Attribute::makeInt("axis", 0)});
    ValueId picks = c.reshape(oneHot, {D, n});
    ValueId summed = c.op("MatMul", {picks, c.reshape(c.gradOut(0), {P, n, Q})});
    c.setGradIn(0, c.reshape(summed, dd));
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
}

}  // namespace passlens::autodiff
