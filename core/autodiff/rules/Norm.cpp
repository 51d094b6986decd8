// Gradients of normalizations and softmax: BatchNormalization (inference form with running
// statistics, training form with batch statistics), InstanceNormalization, LayerNormalization,
// Softmax and LogSoftmax.
#include <numeric>

#include "autodiff/GradientBuilder.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

std::vector<int64_t> range(int64_t from, int64_t to) {
    std::vector<int64_t> v(size_t(std::max<int64_t>(0, to - from)));
    std::iota(v.begin(), v.end(), from);
    return v;
}

/// dx of y = x̂·scale + B where x̂ = (x − μ)·rstd normalizes over `axes` with the batch's own μ
/// and rstd, given dx̂ = g·scale: rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)).
ValueId normalizedInputGrad(GradContext& c, ValueId dxhat, ValueId xhat, ValueId rstd, const std::vector<int64_t>& axes) {
    ValueId m1 = c.reduceMean(dxhat, axes, true);
    ValueId m2 = c.reduceMean(c.op("Mul", {dxhat, xhat}), axes, true);
    ValueId inner = c.op("Sub", {c.op("Sub", {dxhat, m1}), c.op("Mul", {xhat, m2})});
    return c.op("Mul", {inner, rstd});
}

/// x̂ and rstd of x over `axes` (population variance), recomputed from x.
std::pair<ValueId, ValueId> normalizeOver(GradContext& c, ValueId x, const std::vector<int64_t>& axes, float eps) {
    ValueId centered = c.op("Sub", {x, c.reduceMean(x, axes, true)});
    ValueId var = c.reduceMean(c.op("Mul", {centered, centered}), axes, true);
    ValueId rstd = c.op("Reciprocal", {c.op("Sqrt", {c.op("Add", {var, c.scalar(eps)})})});
    return {c.op("Mul", {centered, rstd}), rstd};
}

/// Per-channel normalization with batch statistics over `statAxes` (InstanceNormalization: the
/// spatial axes; training-mode BatchNormalization: batch and spatial axes); scale and B are [C].
void perChannelNormGrad(GradContext& c, const std::vector<int64_t>& statAxes) {
    const ValueId x = c.input(0), g = c.gradOut(0);
    const int64_t r = c.rank(x);
    if (r < 2) c.unsupported("input rank must be at least 2");
    std::vector<int64_t> perChannel(size_t(r - 1), 1);
    perChannel[0] = -1;  // [C, 1, 1, ...] broadcasts along axis 1
    std::vector<int64_t> allButChannel = range(0, r);
    allButChannel.erase(allButChannel.begin() + 1);
    auto [xhat, rstd] = normalizeOver(c, x, statAxes, c.node().attrFloat("epsilon", 1e-5f));
    if (c.needsGrad(0))
        c.setGradIn(0, normalizedInputGrad(c, c.op("Mul", {g, c.reshape(c.input(1), perChannel)}), xhat, rstd, statAxes));
    if (c.needsGrad(1)) c.setGradIn(1, c.reduceSum(c.op("Mul", {g, xhat}), allButChannel, false));
    if (c.needsGrad(2)) c.setGradIn(2, c.reduceSum(g, allButChannel, false));
}

void instanceNormGrad(GradContext& c) { perChannelNormGrad(c, range(2, c.rank(c.input(0)))); }

void batchNormTrainingGrad(GradContext& c) {
    // y = x̂·scale + B with the batch's mean and variance over every axis but the channel; the
    // running mean/var inputs only feed the running statistics outputs, so their gradient is 0.
    for (size_t i = 1; i < c.node().outputs.size(); ++i)
        if (c.gradOut(i) != kNone) c.unsupported("gradients through the running mean/var outputs");
    std::vector<int64_t> axes = range(0, c.rank(c.input(0)));
    axes.erase(axes.begin() + 1);
    perChannelNormGrad(c, axes);
    for (size_t i = 3; i < 5; ++i)
        if (c.needsGrad(i)) c.setGradIn(i, c.zerosLike(c.input(i)));
}

void batchNormGrad(GradContext& c) {
    // Inference form: y = (x − mean)·inv·scale + B with inv = 1/√(var + ε), per channel (axis 1).
    if (c.node().attrInt("training_mode", 0) != 0) return batchNormTrainingGrad(c);
    for (size_t i = 1; i < c.node().outputs.size(); ++i)
        if (c.gradOut(i) != kNone) c.unsupported("gradients through the running mean/var outputs");
    const int64_t r = c.rank(c.input(0));
    std::vector<int64_t> perChannel(size_t(std::max<int64_t>(r - 1, 1)), 1);
    perChannel[0] = -1;  // [C, 1, 1, ...] broadcasts along axis 1
    const ValueId g = c.gradOut(0), x = c.input(0);
    auto channel = [&](ValueId v) { return c.reshape(v, perChannel); };
    std::vector<int64_t> axes = range(0, r);
    axes.erase(axes.begin() + 1);
    const float eps = c.node().attrFloat("epsilon", 1e-5f);
    ValueId inv = c.op("Reciprocal", {c.op("Sqrt", {c.op("Add", {c.input(4), c.scalar(eps)})})});
    ValueId scale = c.input(1);
    if (c.needsGrad(0)) c.setGradIn(0, c.op("Mul", {g, channel(c.op("Mul", {scale, inv}))}));
    ValueId centered = (c.needsGrad(1) || c.needsGrad(4)) ? c.op("Sub", {x, channel(c.input(3))}) : kNone;
    ValueId gSum = (c.needsGrad(2) || c.needsGrad(3)) ? c.reduceSum(g, axes, false) : kNone;
    ValueId gCentered = (c.needsGrad(1) || c.needsGrad(4)) ? c.reduceSum(c.op("Mul", {g, centered}), axes, false) : kNone;
    if (c.needsGrad(1)) c.setGradIn(1, c.op("Mul", {gCentered, inv}));
    if (c.needsGrad(2)) c.setGradIn(2, gSum);
    if (c.needsGrad(3)) c.setGradIn(3, c.op("Neg", {c.op("Mul", {gSum, c.op("Mul", {scale, inv})})}));
    if (c.needsGrad(4)) {
        // d/dvar of inv = −½·inv³
        ValueId inv3 = c.op("Mul", {inv, c.op("Mul", {inv, inv})});
        c.setGradIn(4, c.op("Mul", {c.op("Mul", {gCentered, scale}), c.op("Mul", {inv3, c.scalar(-0.5)})}));
    }
}

void layerNormGrad(GradContext& c) {
    // x̂ = (x − μ)·rstd over axes [axis, rank); y = x̂·scale + B.
    // dx = rstd·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) with dx̂ = g·scale.
    for (size_t i = 1; i < c.node().outputs.size(); ++i)
        if (c.gradOut(i) != kNone) c.unsupported("gradients through the Mean/InvStdDev outputs");
    const ValueId x = c.input(0), g = c.gradOut(0);
    const int64_t r = c.rank(x);
    int64_t axis = c.node().attrInt("axis", -1);
    if (axis < 0) axis += r;
    const std::vector<int64_t> axes = range(axis, r);
    const float eps = c.node().attrFloat("epsilon", 1e-5f);
    // μ and rstd: the node's own optional outputs when it has them, else recomputed from x.
    ValueId mean = c.output(1), rstd = c.output(2);
    if (mean == kNone) mean = c.reduceMean(x, axes, true);
    ValueId centered = c.op("Sub", {x, mean});
    if (rstd == kNone) {
        ValueId var = c.reduceMean(c.op("Mul", {centered, centered}), axes, true);
        rstd = c.op("Reciprocal", {c.op("Sqrt", {c.op("Add", {var, c.scalar(eps)})})});
    }
    ValueId xhat = c.op("Mul", {centered, rstd});
    if (c.needsGrad(0)) c.setGradIn(0, normalizedInputGrad(c, c.op("Mul", {g, c.input(1)}), xhat, rstd, axes));
    if (c.needsGrad(1)) c.setGradIn(1, c.sumToShapeOf(c.op("Mul", {g, xhat}), c.input(1)));
    if (c.needsGrad(2)) c.setGradIn(2, c.sumToShapeOf(g, c.input(2)));
}

/// Softmax's reduction axes: one axis from opset 13, the flattened tail [axis, rank) before.
std::vector<int64_t> softmaxAxes(GradContext& c) {
    const int64_t r = c.rank(c.input(0));
    int64_t axis = c.node().attrInt("axis", c.opset() >= 13 ? -1 : 1);
    if (axis < 0) axis += r;
    return c.opset() >= 13 ? std::vector<int64_t>{axis} : range(axis, r);
}

void softmaxGrad(GradContext& c) {
    // dx = y·(g − Σ g·y)
    const ValueId y = c.output(0), g = c.gradOut(0);
    ValueId dot = c.reduceSum(c.op("Mul", {g, y}), softmaxAxes(c), true);
    c.setGradIn(0, c.op("Mul", {y, c.op("Sub", {g, dot})}));
}

void logSoftmaxGrad(GradContext& c) {
    // dx = g − softmax(x)·Σ g, softmax(x) = exp(y)
    const ValueId y = c.output(0), g = c.gradOut(0);
    ValueId total = c.reduceSum(g, softmaxAxes(c), true);
    c.setGradIn(0, c.op("Sub", {g, c.op("Mul", {c.op("Exp", {y}), total})}));
}

}  // namespace

void registerNormGradients(GradientRegistry& r) {
    r.add("BatchNormalization", batchNormGrad);
    r.add("InstanceNormalization", instanceNormGrad);
    r.add("LayerNormalization", layerNormGrad);
    r.add("Softmax", softmaxGrad);
    r.add("LogSoftmax", logSoftmaxGrad);
}

}  // namespace passlens::autodiff
