// Gradients of Conv and pooling, all in standard ops:
//   Conv   dX = ConvTranspose(g, W) with output_padding restoring X's size;
//          dW = Conv with roles swapped (X as the batch of Cg images, g as the weights, the forward
//               stride becomes the dilation and the forward dilation the stride), cropped to W;
//          dB = ReduceSum(g) over batch and space.
//   ConvTranspose  the adjoint of that Conv: dX = Conv(g, W), dW = the Conv's weight gradient with
//                  g as input and X as output gradient, dB = ReduceSum(g).
//   MaxPool    windows extracted by a one-hot depthwise Conv, ArgMax picks the first maximum,
//              the one-hot of it times g goes back through the matching ConvTranspose.
//   AveragePool / GlobalAveragePool  g spread evenly over each window (ConvTranspose / Expand).
#include <limits>
#include <numeric>

#include "autodiff/GradientBuilder.h"
#include "ir/Tensor.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

struct Window {
    std::vector<int64_t> in, out, kernel, strides, dilations, padB, padE;
    size_t nsp() const { return in.size(); }
};

/// Geometry of a Conv/pool node with static shapes; auto_pad resolved to explicit pads.
Window windowOf(GradContext& c, const std::vector<int64_t>& xDims, const std::vector<int64_t>& yDims,
                const std::vector<int64_t>& kernel) {
    const Node& n = c.node();
    Window w;
    const size_t nsp = xDims.size() - 2;
    w.in.assign(xDims.begin() + 2, xDims.end());
    w.out.assign(yDims.begin() + 2, yDims.end());
    w.kernel = kernel;
    w.strides = n.attrInts("strides", std::vector<int64_t>(nsp, 1));
    w.dilations = n.attrInts("dilations", std::vector<int64_t>(nsp, 1));
    auto pads = n.attrInts("pads", std::vector<int64_t>(2 * nsp, 0));
    if (w.kernel.size() != nsp || w.strides.size() != nsp || w.dilations.size() != nsp || pads.size() != 2 * nsp)
        c.unsupported("kernel_shape/strides/dilations/pads do not match the spatial rank");
    w.padB.assign(pads.begin(), pads.begin() + long(nsp));
    w.padE.assign(pads.begin() + long(nsp), pads.end());
    const std::string autoPad = n.attrString("auto_pad", "NOTSET");
    for (size_t i = 0; i < nsp; ++i) {
        const int64_t ek = (w.kernel[i] - 1) * w.dilations[i] + 1;
        if (autoPad == "VALID") w.padB[i] = w.padE[i] = 0;
        else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
            const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + ek - w.in[i]);
            w.padB[i] = autoPad == "SAME_LOWER" ? total - total / 2 : total / 2;
            w.padE[i] = total - w.padB[i];
        }
        // ceil_mode adds a last window that runs past the padded end. For MaxPool it is more end
        // padding (the lowest value, never the maximum: that window starts inside the input);
        // AveragePool's divisor there has no Conv/ConvTranspose counterpart.
        const int64_t floorOut = (w.in[i] + w.padB[i] + w.padE[i] - ek) / w.strides[i] + 1;
        if (floorOut != w.out[i]) {
            if (n.opType != "MaxPool" || n.attrInt("ceil_mode", 0) == 0 || w.out[i] != floorOut + 1)
                c.unsupported("ceil_mode windows that run past the padded input are not supported");
            w.padE[i] += (w.out[i] - 1) * w.strides[i] + ek - (w.in[i] + w.padB[i] + w.padE[i]);
        }
    }
    return w;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

/// Static dims except a symbolic batch (dim 0; also the channels when the caller never reads them), returned as −1: the backward graph only uses the
/// batch inside Reshape targets, where −1 stands for it, so dynamic-batch models train at any batch.
std::vector<int64_t> staticButBatch(GradContext& c, ValueId v, const std::string& why, bool channelsMayBeUnknown = false) {
    const TypeInfo& t = c.graph().value(v).type;
    if (t.isTensor() && t.shape && t.shape->rank() >= 1) {
        std::vector<int64_t> d;
        bool ok = true;
        for (size_t i = 0; i < t.shape->dims.size(); ++i) {
            if (t.shape->dims[i].isStatic()) d.push_back(*t.shape->dims[i].value);
            else if (i == 0 || (i == 1 && channelsMayBeUnknown)) d.push_back(-1);
            else ok = false;
        }
        if (ok) return d;
    }
    return c.requireStaticShape(v, why);
}

/// Conv/ConvTranspose attributes of a window (explicit pads).
std::vector<Attribute> windowAttrs(const Window& w, int64_t group, bool swapStrideDilation = false) {
    return {Attribute::makeInts("strides", swapStrideDilation ? w.dilations : w.strides),
            Attribute::makeInts("dilations", swapStrideDilation ? w.strides : w.dilations),
            Attribute::makeInts("pads", concat(w.padB, w.padE)), Attribute::makeInt("group", group)};
}

/// ConvTranspose of `g` with weights `wt` back to the window's input size.
ValueId transposeBack(GradContext& c, ValueId g, ValueId wt, const Window& w, int64_t group) {
    std::vector<int64_t> outPad(w.nsp());
    for (size_t i = 0; i < w.nsp(); ++i) {
        const int64_t full = w.strides[i] * (w.out[i] - 1) + (w.kernel[i] - 1) * w.dilations[i] + 1 - w.padB[i] - w.padE[i];
        outPad[i] = w.in[i] - full;  // the rows the forward stride skipped at the end
    }
    auto attrs = windowAttrs(w, group);
    attrs.push_back(Attribute::makeInts("output_padding", outPad));
    return c.op("ConvTranspose", {g, wt}, std::move(attrs));
}

/// dW of a Conv with input `x` (dims `xd`, a symbolic batch as −1), output gradient `g`, geometry
/// `w` and `group`: [M, C/group, kernel...].
ValueId convWeightGrad(GradContext& c, ValueId x, ValueId g, const std::vector<int64_t>& xd, const Window& w, int64_t group) {
    const int64_t nsp = int64_t(w.nsp());
    std::vector<int64_t> spatialAxes(static_cast<size_t>(nsp));
    std::iota(spatialAxes.begin(), spatialAxes.end(), 2);
    // dW[m, c, k] = Σ_{n, o} g[n, m, o] · Xpad[n, g·Cg + c, o·s + k·d]: a grouped Conv over the
    // batch of Cg "images" X'[c, (group, n), ...] with g'[(group, m), n, ...] as weights.
    const int64_t N = xd[0], C = xd[1], Cg = C / group;
    std::vector<int64_t> perm(static_cast<size_t>(nsp + 2));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[0], perm[1]);
    ValueId xT;
    if (group == 1) {
        xT = c.op("Transpose", {x}, {Attribute::makeInts("perm", perm)});
    } else {
        std::vector<int64_t> split = concat({N, group, Cg}, w.in);
        std::vector<int64_t> perm5(static_cast<size_t>(nsp + 3));
        std::iota(perm5.begin(), perm5.end(), 0);
        std::swap(perm5[0], perm5[2]);
        ValueId t = c.op("Transpose", {c.reshape(x, split)}, {Attribute::makeInts("perm", perm5)});
        xT = c.reshape(t, concat({Cg, N < 0 ? -1 : group * N}, w.in));
    }
    ValueId gT = c.op("Transpose", {g}, {Attribute::makeInts("perm", perm)});
    ValueId full = c.op("Conv", {xT, gT}, windowAttrs(w, group, true));
    // The swapped Conv may reach past the kernel when the padded input has spare rows: crop.
    bool crop = false;
    for (int64_t i = 0; i < nsp; ++i) {
        const int64_t reach = (w.in[size_t(i)] + w.padB[size_t(i)] + w.padE[size_t(i)] - (w.strides[size_t(i)] * (w.out[size_t(i)] - 1) + 1)) /
                                  w.dilations[size_t(i)] + 1;
        crop = crop || reach != w.kernel[size_t(i)];
    }
    if (crop)
        full = c.op("Slice", {full, c.ints(std::vector<int64_t>(size_t(nsp), 0), "starts"), c.ints(w.kernel, "ends"),
                              c.ints(spatialAxes, "axes")});
    return c.op("Transpose", {full}, {Attribute::makeInts("perm", perm)});
}

void convGrad(GradContext& c) {
    const ValueId x = c.input(0), wv = c.input(1), g = c.gradOut(0);
    // An ungrouped Conv never needs the channel counts (the weight gives them).
    const bool ungrouped = c.node().attrInt("group", 1) == 1;
    const auto xd = staticButBatch(c, x, "Conv geometry", ungrouped);
    const auto wd = c.requireStaticShape(wv, "Conv geometry");
    const auto yd = staticButBatch(c, c.output(0), "Conv geometry", ungrouped);
    if (xd.size() < 3) c.unsupported("input rank must be at least 3");
    const int64_t group = c.node().attrInt("group", 1);
    const Window w = windowOf(c, xd, yd, std::vector<int64_t>(wd.begin() + 2, wd.end()));
    const int64_t nsp = int64_t(w.nsp());
    std::vector<int64_t> spatialAxes(static_cast<size_t>(nsp));
    std::iota(spatialAxes.begin(), spatialAxes.end(), 2);
    if (c.needsGrad(0)) c.setGradIn(0, transposeBack(c, g, wv, w, group));
    if (c.needsGrad(1)) c.setGradIn(1, convWeightGrad(c, x, g, xd, w, group));
    if (c.needsGrad(2)) c.setGradIn(2, c.reduceSum(g, concat({0}, spatialAxes), false));
}

void convTransposeGrad(GradContext& c) {
    // y = ConvTranspose(x, W) is the adjoint of the Conv with the same W, strides, pads, dilations
    // and group (W as [M = C_in, C_out/group, kernel]): dx = Conv(g, W); dW is that Conv's weight
    // gradient with g as its input and x as its output gradient; dB = ReduceSum(g).
    const Node& n = c.node();
    if (n.attr("output_shape")) c.unsupported("output_shape (give pads and output_padding instead)");
    if (n.attrString("auto_pad", "NOTSET") != "NOTSET") c.unsupported("auto_pad " + n.attrString("auto_pad", ""));
    const ValueId x = c.input(0), wv = c.input(1), g = c.gradOut(0);
    const int64_t group = n.attrInt("group", 1);
    const auto xd = staticButBatch(c, x, "ConvTranspose geometry", group == 1);
    const auto wd = c.requireStaticShape(wv, "ConvTranspose geometry");
    const auto yd = staticButBatch(c, c.output(0), "ConvTranspose geometry", group == 1);
    if (xd.size() < 3) c.unsupported("input rank must be at least 3");
    // The adjoint Conv reads y-shaped tensors and writes x-shaped ones.
    const Window w = windowOf(c, yd, xd, std::vector<int64_t>(wd.begin() + 2, wd.end()));
    std::vector<int64_t> spatialAxes(w.nsp());
    std::iota(spatialAxes.begin(), spatialAxes.end(), 2);
    if (c.needsGrad(0)) c.setGradIn(0, c.op("Conv", {g, wv}, windowAttrs(w, group)));
    if (c.needsGrad(1)) c.setGradIn(1, convWeightGrad(c, g, x, yd, w, group));
    if (c.needsGrad(2)) c.setGradIn(2, c.reduceSum(g, concat({0}, spatialAxes), false));
}

/// [C·K, 1, kernel...] weights whose channel (c, k) picks kernel position k: a depthwise Conv
/// with them lists every window's elements; the ConvTranspose with them adds them back.
TensorPtr oneHotKernels(int64_t C, const std::vector<int64_t>& kernel, DataType dt) {
    const int64_t K = std::accumulate(kernel.begin(), kernel.end(), int64_t{1}, std::multiplies<>());
    std::vector<double> v(size_t(C * K * K), 0.0);
    for (int64_t ch = 0; ch < C; ++ch)
        for (int64_t k = 0; k < K; ++k) v[size_t((ch * K + k) * K + k)] = 1.0;
    return floatTensorOf(dt, concat({C * K, 1}, kernel), v);
}

/// For each kernel position k and output position o along all spatial axes: does the window
/// element fall inside the input (true) or on padding (false)? Row-major [K, out...].
std::vector<bool> insideInput(const Window& w) {
    const int64_t K = std::accumulate(w.kernel.begin(), w.kernel.end(), int64_t{1}, std::multiplies<>());
    const int64_t O = std::accumulate(w.out.begin(), w.out.end(), int64_t{1}, std::multiplies<>());
    std::vector<bool> inside(static_cast<size_t>(K * O));
    const size_t nsp = w.nsp();
    for (int64_t k = 0; k < K; ++k)
        for (int64_t o = 0; o < O; ++o) {
            bool in = true;
            int64_t kr = k, orr = o;
            for (size_t i = nsp; i-- > 0;) {
                const int64_t ki = kr % w.kernel[i], oi = orr % w.out[i];
                kr /= w.kernel[i];
                orr /= w.out[i];
                const int64_t pos = oi * w.strides[i] + ki * w.dilations[i] - w.padB[i];
                in = in && pos >= 0 && pos < w.in[i];
            }
            inside[size_t(k * O + o)] = in;
        }
    return inside;
}

bool hasPadding(const Window& w) {
    for (size_t i = 0; i < w.nsp(); ++i)
        if (w.padB[i] || w.padE[i]) return true;
    return false;
}

void maxPoolGrad(GradContext& c) {
    if (c.node().attrInt("storage_order", 0) != 0) c.unsupported("storage_order=1");
    const ValueId x = c.input(0), g = c.gradOut(0);
    const auto xd = staticButBatch(c, x, "MaxPool geometry");
    const auto yd = staticButBatch(c, c.output(0), "MaxPool geometry");
    const Window w = windowOf(c, xd, yd, c.node().attrInts("kernel_shape"));
    const int64_t N = xd[0], C = xd[1];
    const int64_t K = std::accumulate(w.kernel.begin(), w.kernel.end(), int64_t{1}, std::multiplies<>());
    const DataType dt = c.floatType();
    ValueId kernels = c.constant(oneHotKernels(C, w.kernel, dt), "window_kernels");
    // Every window's elements: [N, C, K, out...]; padding reads as 0, so it gets the lowest value.
    ValueId patches = c.reshape(c.op("Conv", {x, kernels}, windowAttrs(w, C)), concat({N, C, K}, w.out));
    if (hasPadding(w)) {
        auto inside = insideInput(w);
        std::vector<double> penalty(inside.size());
        for (size_t i = 0; i < inside.size(); ++i) penalty[i] = inside[i] ? 0.0 : double(std::numeric_limits<float>::lowest());
        patches = c.op("Add", {patches, c.floats(concat({K}, w.out), penalty, "padding_penalty")});
    }
    // The first maximum of each window takes the gradient (as MaxPool's Indices would say).
    ValueId argmax = c.op("ArgMax", {patches}, {Attribute::makeInt("axis", 2), Attribute::makeInt("keepdims", 0)});
    ValueId pick = c.op("OneHot", {argmax, c.ints({K}, "depth"), c.floats({2}, {0.0, 1.0}, "off_on")},
                        {Attribute::makeInt("axis", 2)});
    ValueId spread = c.op("Mul", {pick, c.reshape(g, concat({N, C, 1}, w.out))});
    c.setGradIn(0, transposeBack(c, c.reshape(spread, concat({N, C * K}, w.out)), kernels, w, C));
}

void averagePoolGrad(GradContext& c) {
    const ValueId x = c.input(0), g = c.gradOut(0);
    const auto xd = staticButBatch(c, x, "AveragePool geometry");
    const auto yd = staticButBatch(c, c.output(0), "AveragePool geometry");
    const Window w = windowOf(c, xd, yd, c.node().attrInts("kernel_shape"));
    const int64_t C = xd[1];
    const int64_t K = std::accumulate(w.kernel.begin(), w.kernel.end(), int64_t{1}, std::multiplies<>());
    // Each window's divisor: K, or (count_include_pad=0 with padding) the elements inside the input.
    ValueId scaled;
    if (hasPadding(w) && c.node().attrInt("count_include_pad", 0) == 0) {
        auto inside = insideInput(w);
        const size_t O = inside.size() / size_t(K);
        std::vector<double> inv(O, 0.0);
        for (size_t o = 0; o < O; ++o) {
            int64_t count = 0;
            for (int64_t k = 0; k < K; ++k) count += inside[size_t(k) * O + o];
            inv[o] = 1.0 / double(count);
        }
        scaled = c.op("Mul", {g, c.floats(w.out, inv, "inverse_counts")});
    } else {
        scaled = c.op("Mul", {g, c.scalar(1.0 / double(K))});
    }
    std::vector<double> ones(size_t(C * K), 1.0);
    ValueId kernels = c.floats(concat({C, 1}, w.kernel), ones, "window_ones");
    c.setGradIn(0, transposeBack(c, scaled, kernels, w, C));
}

void globalAveragePoolGrad(GradContext& c) {
    const auto maybe = c.staticShape(c.input(0));
    if (!maybe) {
        // Symbolic spatial dims: the window is Size(x) / Size(y) elements, computed at run time.
        auto size = [&](ValueId v) { return c.op("Cast", {c.op("Size", {v})}, {Attribute::makeInt("to", int64_t(c.floatType()))}); };
        ValueId count = c.op("Div", {size(c.input(0)), size(c.output(0))});
        c.setGradIn(0, c.op("Div", {c.op("Expand", {c.gradOut(0), c.op("Shape", {c.input(0)})}), count}));
        return;
    }
    const auto xd = *maybe;
    const int64_t spatial = std::accumulate(xd.begin() + 2, xd.end(), int64_t{1}, std::multiplies<>());
    ValueId scaled = c.op("Mul", {c.gradOut(0), c.scalar(1.0 / double(spatial))});
    c.setGradIn(0, c.op("Expand", {scaled, c.ints(xd, "shape")}));
}

}  // namespace

void registerConvGradients(GradientRegistry& r) {
    r.add("Conv", convGrad);
    r.add("ConvTranspose", convTransposeGrad);
    r.add("MaxPool", maxPoolGrad);
    r.add("AveragePool", averagePoolGrad);
    r.add("GlobalAveragePool", globalAveragePoolGrad);
}

}  // namespace passlens::autodiff
