// Gradients of ReduceSum and ReduceMean: g, with the reduced axes restored, expanded back to the
// input's shape (divided by the element count for the mean).
#include <numeric>

#include "autodiff/GradientBuilder.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

/// Reduced axes (normalized, sorted); empty = identity (noop_with_empty_axes).
std::vector<int64_t> reducedAxes(GradContext& c, int64_t axesInputSince, bool* identity) {
    const int64_t r = c.rank(c.input(0));
    std::vector<int64_t> axes;
    if (c.opset() >= axesInputSince) {
        if (c.input(1) != kNone) {
            auto a = c.constantInts(c.input(1));
            if (!a) c.unsupported("axes must be a constant");
            axes = *a;
        }
    } else {
        axes = c.node().attrInts("axes");
    }
    *identity = axes.empty() && c.node().attrInt("noop_with_empty_axes", 0) != 0;
    if (axes.empty() && !*identity) {
        axes.resize(size_t(r));
        std::iota(axes.begin(), axes.end(), 0);
    }
    for (auto& a : axes)
        if (a < 0) a += r;
    std::sort(axes.begin(), axes.end());
    return axes;
}

ValueId spreadBack(GradContext& c, const std::vector<int64_t>& axes) {
    ValueId g = c.gradOut(0);
    if (c.node().attrInt("keepdims", 1) == 0 && !axes.empty()) g = c.unsqueeze(g, axes);
    return c.op("Expand", {g, c.shapeOf(c.input(0))});
}

void reduceSumGrad(GradContext& c) {
    bool identity = false;
    auto axes = reducedAxes(c, 13, &identity);
    c.setGradIn(0, identity ? c.gradOut(0) : spreadBack(c, axes));
}

void reduceMeanGrad(GradContext& c) {
    bool identity = false;
    auto axes = reducedAxes(c, 18, &identity);
    if (identity) return c.setGradIn(0, c.gradOut(0));
    if (auto dims = c.staticShape(c.input(0))) {
        int64_t count = 1;
        for (int64_t a : axes) count *= (*dims)[size_t(a)];
        return c.setGradIn(0, c.op("Mul", {spreadBack(c, axes), c.scalar(1.0 / double(count))}));
    }
    // Symbolic dims: the element count is Size(x) / Size(y), computed when the graph runs.
    auto size = [&](ValueId v) {
        return c.op("Cast", {c.op("Size", {v})}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    };
    ValueId count = c.op("Div", {size(c.input(0)), size(c.output(0))});
    c.setGradIn(0, c.op("Div", {spreadBack(c, axes), count}));
}

}  // namespace

void registerReduceGradients(GradientRegistry& r) {
    r.add("ReduceSum", reduceSumGrad, {1});
    r.add("ReduceMean", reduceMeanGrad, {1});
}

}  // namespace passlens::autodiff
