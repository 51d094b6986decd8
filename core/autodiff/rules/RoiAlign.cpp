// Gradient of RoiAlign (mode avg, fixed sampling_ratio) with respect to its feature map.
//
// For one region r, bin (i, j) and channel c the forward averages s×s bilinear samples of the
// feature map. Bilinear weights, the "sample outside [-1, L] reads 0" rule and the average over
// the s×s grid all factor into a height part and a width part, so
//     y[r, c] = Wy[r] · x[b_r, c] · Wx[r]ᵀ
// with Wy[r] of shape [output_height, H] and Wx[r] of shape [output_width, W]. A sample at
// coordinate p (clamped to [0, L-1]) weighs max(0, 1 - |p - h|) at row h: the tent that equals
// the spec's low/high neighbour weights, including the clamp at the last row. Then
//     dx[b] = Σ_{r: b_r = b} Wy[r]ᵀ · dy[r, c] · Wx[r]
// computed as two MatMuls; the batch sum is a one-hot mask folded into Wy. The regions and batch
// indices get no gradient (torchvision detaches its proposals). Adaptive sampling
// (sampling_ratio 0, a grid size per region) and mode max are refused by name.
#include <cmath>

#include "autodiff/GradientBuilder.h"
#include "ir/Tensor.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

struct RoiAlignSpec {
    int64_t pooledH = 1, pooledW = 1, sampling = 0;
    double scale = 1.0;
    bool halfPixel = false;  ///< coordinate_transformation_mode half_pixel (shift by -0.5, no min size)
};

/// Interpolation weights of one spatial axis: [R, pooled, L], the average over the s samples of
/// each bin of the samples' tent weights. `lowCol`/`highCol` are the rois' columns for this axis.
ValueId axisWeights(GradContext& c, const RoiAlignSpec& spec, int64_t lowCol, int64_t highCol, int64_t pooled, int64_t axis) {
    const ValueId rois = c.input(1);
    auto column = [&](int64_t col) {
        ValueId v = c.op("Slice", {rois, c.ints({col}, "start"), c.ints({col + 1}, "end"), c.ints({1}, "axis")});
        v = c.op("Mul", {v, c.scalar(spec.scale)});
        return spec.halfPixel ? c.op("Sub", {v, c.scalar(0.5)}) : v;
    };
    const ValueId start = column(lowCol);  // [R, 1]
    ValueId length = c.op("Sub", {column(highCol), start});
    if (!spec.halfPixel) length = c.op("Max", {length, c.scalar(1.0)});
    const ValueId bin = c.op("Div", {length, c.scalar(double(pooled))});

    // Sample k of the axis sits at bin k / s, offset ((k mod s) + 0.5) / s bins into it.
    const int64_t s = spec.sampling, samples = pooled * s;
    std::vector<double> offsets(static_cast<size_t>(samples));
    for (int64_t k = 0; k < samples; ++k) offsets[size_t(k)] = double(k / s) + (double(k % s) + 0.5) / double(s);
    const ValueId pos = c.op("Add", {start, c.op("Mul", {bin, c.floats({1, samples}, offsets, "sample_offsets")})});  // [R, K]

    const ValueId extent = c.shapeDims(c.input(0), axis, axis + 1);  // int64 [1]
    const ValueId extentF = c.op("Cast", {extent}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    // Samples outside [-1, L] read zero; the rest are clamped into [0, L-1].
    ValueId inside = c.op("And", {c.op("Not", {c.op("Less", {pos, c.scalar(-1.0)})}), c.op("Not", {c.op("Greater", {pos, extentF})})});
    inside = c.op("Cast", {inside}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    const ValueId last = c.op("Sub", {extentF, c.scalar(1.0)});
    const ValueId clamped = c.op("Min", {c.op("Max", {pos, c.scalar(0.0)}), last});

    const ValueId extentScalar = c.op("Reshape", {extent, c.ints({}, "scalar_shape")});
    ValueId grid = c.op("Range", {c.int64Scalar(0), extentScalar, c.int64Scalar(1)});
    grid = c.op("Cast", {grid}, {Attribute::makeInt("to", int64_t(c.floatType()))});  // [L]
    const ValueId dist = c.op("Abs", {c.op("Sub", {c.unsqueeze(clamped, {2}), grid})});  // [R, K, L]
    ValueId weights = c.op("Relu", {c.op("Sub", {c.scalar(1.0), dist})});
    weights = c.op("Mul", {weights, c.unsqueeze(inside, {2})});
    // [R, pooled, s, L] → mean over the s samples of each bin.
    const ValueId split = c.op("Concat", {c.ints({-1, pooled, s}, "bins"), extent}, {Attribute::makeInt("axis", 0)});
    return c.reduceMean(c.op("Reshape", {weights, split}), {2}, false);
}

void roiAlignGrad(GradContext& c) {
    const Node& n = c.node();
    if (n.attrString("mode", "avg") != "avg") c.unsupported("mode " + n.attrString("mode", "avg") + " (only avg is linear in the input)");
    RoiAlignSpec spec;
    spec.pooledH = n.attrInt("output_height", 1);
    spec.pooledW = n.attrInt("output_width", 1);
    spec.sampling = n.attrInt("sampling_ratio", 0);
    spec.scale = n.attrFloat("spatial_scale", 1.0f);
    // Opset 10 has no attribute and behaves as output_half_pixel; from 16 the default is half_pixel.
    const std::string mode = n.attrString("coordinate_transformation_mode", c.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (mode != "half_pixel" && mode != "output_half_pixel") c.unsupported("coordinate_transformation_mode " + mode);
    spec.halfPixel = mode == "half_pixel";
    if (spec.sampling <= 0)
        c.unsupported("sampling_ratio 0 (the sample grid adapts to each region's size); torchvision's box and mask heads use 2");
    if (spec.pooledH <= 0 || spec.pooledW <= 0) c.unsupported("output_height and output_width must be positive");
    if (c.rank(c.input(0)) != 4) c.unsupported("the input must be 4-D (N, C, H, W)");

    const ValueId x = c.input(0);
    const ValueId wy = axisWeights(c, spec, 1, 3, spec.pooledH, 2);  // [R, ph, H]
    const ValueId wx = axisWeights(c, spec, 0, 2, spec.pooledW, 3);  // [R, pw, W]

    // dy · Wx over the output width: [R, C, ph, pw] · [R, 1, pw, W] → [R, C, ph, W] → [R·ph, C·W].
    ValueId rows = c.op("MatMul", {c.gradOut(0), c.unsqueeze(wx, {1})});
    rows = c.op("Transpose", {rows}, {Attribute::makeInts("perm", {0, 2, 1, 3})});
    const ValueId dimN = c.shapeDims(x, 0, 1), dimC = c.shapeDims(x, 1, 2), dimH = c.shapeDims(x, 2, 3), dimW = c.shapeDims(x, 3, 4);
    const ValueId cw = c.op("Mul", {dimC, dimW});
    rows = c.op("Reshape", {rows, c.op("Concat", {c.ints({-1}, "rows"), cw}, {Attribute::makeInt("axis", 0)})});

    // Each region adds into its own image: Wy masked by a one-hot of the batch index, [R·ph, N·H].
    const ValueId images = c.op("Range", {c.int64Scalar(0), c.op("Reshape", {dimN, c.ints({}, "scalar_shape")}), c.int64Scalar(1)});
    ValueId oneHot = c.op("Equal", {c.unsqueeze(c.input(2), {1}), images});  // [R, N]
    oneHot = c.op("Cast", {oneHot}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    ValueId wyImages = c.op("Mul", {c.unsqueeze(oneHot, {1, 3}), c.unsqueeze(wy, {2})});  // [R, ph, N, H]
    const ValueId nh = c.op("Mul", {dimN, dimH});
    wyImages = c.op("Reshape", {wyImages, c.op("Concat", {c.ints({-1}, "rows"), nh}, {Attribute::makeInt("axis", 0)})});

    // [N·H, R·ph] · [R·ph, C·W] → [N, H, C, W] → [N, C, H, W].
    ValueId dx = c.op("MatMul", {c.op("Transpose", {wyImages}, {Attribute::makeInts("perm", {1, 0})}), rows});
    dx = c.op("Reshape", {dx, c.op("Concat", {dimN, dimH, dimC, dimW}, {Attribute::makeInt("axis", 0)})});
    c.setGradIn(0, c.op("Transpose", {dx}, {Attribute::makeInts("perm", {0, 2, 1, 3})}));
}

}  // namespace

void registerRoiAlignGradients(GradientRegistry& r) { r.add("RoiAlign", roiAlignGrad, {1, 2}); }

}  // namespace passlens::autodiff
