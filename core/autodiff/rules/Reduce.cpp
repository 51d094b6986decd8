// Gradients of the reductions and CumSum. ReduceSum and ReduceMean: g, with the reduced axes
// restored, expanded back to the input's shape (divided by the element count for the mean);
// ReduceMax/ReduceMin route g to the elements equal to the result (split evenly between ties, as
// torch's amax/amin backward); ReduceL2 and ReduceSumSquare scale x; CumSum runs the other way.
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

/// g and the forward result with the reduced axes restored (size 1), so they broadcast against x.
std::pair<ValueId, ValueId> keptDims(GradContext& c, const std::vector<int64_t>& axes) {
    ValueId g = c.gradOut(0), y = c.output(0);
    if (c.node().attrInt("keepdims", 1) == 0 && !axes.empty()) {
        g = c.unsqueeze(g, axes);
        y = c.unsqueeze(y, axes);
    }
    return {g, y};
}

void reduceExtremeGrad(GradContext& c) {
    bool identity = false;
    auto axes = reducedAxes(c, 18, &identity);
    if (identity) return c.setGradIn(0, c.gradOut(0));
    auto [g, y] = keptDims(c, axes);
    ValueId hit = c.op("Cast", {c.op("Equal", {c.input(0), y})}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    ValueId ties = c.reduceSum(hit, axes, true);
    c.setGradIn(0, c.op("Div", {c.op("Mul", {g, hit}), ties}));
}

/// Reduced axes of ReduceL2/ReduceSumSquare; `noop_with_empty_axes` with no axes is refused (the
/// spec and its reference disagree on whether that output is x or x²).
std::vector<int64_t> reducedAxesNoNoop(GradContext& c) {
    bool identity = false;
    auto axes = reducedAxes(c, 18, &identity);
    if (identity) c.unsupported("noop_with_empty_axes with empty axes");
    return axes;
}

void reduceL2Grad(GradContext& c) {
    // y = √Σx²: dx = g·x/y, 0 where y = 0 (torch's norm backward).
    auto [g, y] = keptDims(c, reducedAxesNoNoop(c));
    ValueId zero = c.op("Equal", {y, c.scalar(0)});
    ValueId safe = c.op("Where", {zero, c.scalar(1), y});
    ValueId dx = c.op("Div", {c.op("Mul", {g, c.input(0)}), safe});
    c.setGradIn(0, c.op("Where", {zero, c.scalar(0), dx}));
}

void reduceSumSquareGrad(GradContext& c) {
    // y = Σx²: dx = 2x·g.
    ValueId g = keptDims(c, reducedAxesNoNoop(c)).first;
    c.setGradIn(0, c.op("Mul", {g, c.op("Mul", {c.input(0), c.scalar(2)})}));
}

void cumSumGrad(GradContext& c) {
    // Each input element feeds the outputs after it (before it when reversed): the gradient is
    // the cumulative sum of g in the other direction, with the same exclusivity.
    const int64_t reverse = c.node().attrInt("reverse", 0), exclusive = c.node().attrInt("exclusive", 0);
    c.setGradIn(0, c.op("CumSum", {c.gradOut(0), c.input(1)},
                        {Attribute::makeInt("exclusive", exclusive), Attribute::makeInt("reverse", reverse ? 0 : 1)}));
}

}  // namespace

void registerReduceGradients(GradientRegistry& r) {
    r.add("ReduceSum", reduceSumGrad, {1});
    r.add("ReduceMean", reduceMeanGrad, {1});
    r.add("ReduceMax", reduceExtremeGrad, {1});
    r.add("ReduceMin", reduceExtremeGrad, {1});
    r.add("ReduceL2", reduceL2Grad, {1});
    r.add("ReduceSumSquare", reduceSumSquareGrad, {1});
    r.add("CumSum", cumSumGrad, {1});
}

}  // namespace passlens::autodiff
