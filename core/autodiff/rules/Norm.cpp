// Gradients of normalizations and softmax: BatchNormalization (inference form), LayerNormalization,
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

void batchNormGrad(GradContext& c) {
    // Inference form: y = (x − mean)·inv·scale + B with inv = 1/√(var + ε), per channel (axis 1).
    if (c.node().attrInt("training_mode", 0) != 0) c.unsupported("training_mode=1 (only the inference form is differentiated)");
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
    if (c.needsGrad(0)) {
        ValueId dxhat = c.op("Mul", {g, c.input(1)});
        ValueId m1 = c.reduceMean(dxhat, axes, true);
        ValueId m2 = c.reduceMean(c.op("Mul", {dxhat, xhat}), axes, true);
        ValueId inner = c.op("Sub", {c.op("Sub", {dxhat, m1}), c.op("Mul", {xhat, m2})});
        c.setGradIn(0, c.op("Mul", {inner, rstd}));
    }
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
    r.add("LayerNormalization", layerNormGrad);
    r.add("Softmax", softmaxGrad);
    r.add("LogSoftmax", logSoftmaxGrad);
}

}  // namespace passlens::autodiff
