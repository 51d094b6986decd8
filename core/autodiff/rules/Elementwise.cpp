// Gradients of elementwise ops. Binary ops broadcast, so each operand's gradient is summed back
// to its shape (GradContext::sumToShapeOf).
#include <cmath>

#include "autodiff/GradientBuilder.h"
#include "ir/Error.h"
#include "ir/Tensor.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

void addGrad(GradContext& c) {
    for (size_t i = 0; i < c.inputCount(); ++i)
        if (c.needsGrad(i)) c.setGradIn(i, c.sumToShapeOf(c.gradOut(0), c.input(i)));
}

void subGrad(GradContext& c) {
    if (c.needsGrad(0)) c.setGradIn(0, c.sumToShapeOf(c.gradOut(0), c.input(0)));
    if (c.needsGrad(1)) c.setGradIn(1, c.sumToShapeOf(c.op("Neg", {c.gradOut(0)}), c.input(1)));
}

void mulGrad(GradContext& c) {
    const ValueId g = c.gradOut(0);
    if (c.needsGrad(0)) c.setGradIn(0, c.sumToShapeOf(c.op("Mul", {g, c.input(1)}), c.input(0)));
    if (c.needsGrad(1)) c.setGradIn(1, c.sumToShapeOf(c.op("Mul", {g, c.input(0)}), c.input(1)));
}

void divGrad(GradContext& c) {
    // y = a / b: da = g / b; db = -g·a/b² = -g·y/b (either a or y serves).
    const ValueId g = c.gradOut(0), b = c.input(1);
    if (c.needsGrad(0)) c.setGradIn(0, c.sumToShapeOf(c.op("Div", {g, b}), c.input(0)));
    if (!c.needsGrad(1)) return;
    const ValueId saved = c.pickSaved({c.output(0), c.input(0)});
    ValueId db = saved == c.output(0) ? c.op("Div", {c.op("Mul", {g, saved}), b})
                                      : c.op("Div", {c.op("Mul", {g, saved}), c.op("Mul", {b, b})});
    c.setGradIn(1, c.sumToShapeOf(c.op("Neg", {db}), b));
}

void powGrad(GradContext& c) {
    // y = x^e: dx = g·e·x^(e-1); de = g·y·ln(x).
    const ValueId g = c.gradOut(0), x = c.input(0);
    ValueId e = c.input(1);
    if (c.graph().value(e).type.elemType != c.floatType()) e = c.op("Cast", {e}, {Attribute::makeInt("to", int64_t(c.floatType()))});
    if (c.needsGrad(0)) {
        ValueId power = c.op("Pow", {x, c.op("Sub", {e, c.scalar(1)})});
        c.setGradIn(0, c.sumToShapeOf(c.op("Mul", {c.op("Mul", {g, e}), power}), x));
    }
    if (c.needsGrad(1))
        c.setGradIn(1, c.sumToShapeOf(c.op("Mul", {c.op("Mul", {g, c.output(0)}), c.op("Log", {x})}), c.input(1)));
}

void sumGrad(GradContext& c) { addGrad(c); }

void negGrad(GradContext& c) { c.setGradIn(0, c.op("Neg", {c.gradOut(0)})); }
void identityGrad(GradContext& c) { c.setGradIn(0, c.gradOut(0)); }

void dropoutGrad(GradContext& c) {
    // The output is the input when training_mode is a constant false (inference) or the ratio is a
    // constant 0 (Swin's attention dropout, exported with training_mode true): g passes through.
    // A real training-mode Dropout would need its mask.
    auto constantIs = [&](size_t slot, auto test) {
        const TensorPtr t = slot < c.inputCount() ? c.constantTensor(c.input(slot)) : nullptr;
        return t && t->elementCount() == 1 && test(*t);
    };
    const bool inference = c.inputCount() < 3 || c.input(2) == kNone ||
                           constantIs(2, [](const Tensor& t) { return t.dtype == DataType::Bool && t.as<uint8_t>()[0] == 0; });
    const bool ratioZero = constantIs(1, [](const Tensor& t) {
        return (t.dtype == DataType::Float && t.as<float>()[0] == 0.0f) || (t.dtype == DataType::Double && t.as<double>()[0] == 0.0);
    });
    if (!inference && !ratioZero)
        c.unsupported("training_mode must be a constant false or the ratio a constant 0 (a training-mode Dropout's mask is not kept)");
    c.setGradIn(0, c.gradOut(0));
}

void castGrad(GradContext& c) {
    const DataType from = c.graph().value(c.input(0)).type.elemType;
    c.setGradIn(0, c.op("Cast", {c.gradOut(0)}, {Attribute::makeInt("to", int64_t(from))}));
}

void sqrtGrad(GradContext& c) {
    // y = √x: dx = g / (2y).
    c.setGradIn(0, c.op("Div", {c.gradOut(0), c.op("Mul", {c.output(0), c.scalar(2)})}));
}

void expGrad(GradContext& c) {
    // y = eˣ: dx = g·y; y is recomputed from x when x is the cheaper tensor to keep.
    ValueId s = c.pickSaved({c.output(0), c.input(0)});
    ValueId y = s == c.output(0) ? s : c.op("Exp", {s});
    c.setGradIn(0, c.op("Mul", {c.gradOut(0), y}));
}

void logGrad(GradContext& c) { c.setGradIn(0, c.op("Div", {c.gradOut(0), c.input(0)})); }
void sinGrad(GradContext& c) { c.setGradIn(0, c.op("Mul", {c.gradOut(0), c.op("Cos", {c.input(0)})})); }
void cosGrad(GradContext& c) { c.setGradIn(0, c.op("Neg", {c.op("Mul", {c.gradOut(0), c.op("Sin", {c.input(0)})})})); }

void tanhGrad(GradContext& c) {
    // y = tanh x: dx = g·(1 − y²).
    ValueId s = c.pickSaved({c.output(0), c.input(0)});
    ValueId y = s == c.output(0) ? s : c.op("Tanh", {s});
    c.setGradIn(0, c.op("Mul", {c.gradOut(0), c.op("Sub", {c.scalar(1), c.op("Mul", {y, y})})}));
}

void sigmoidGrad(GradContext& c) {
    // y = σ(x): dx = g·y·(1 − y).
    ValueId s = c.pickSaved({c.output(0), c.input(0)});
    ValueId y = s == c.output(0) ? s : c.op("Sigmoid", {s});
    c.setGradIn(0, c.op("Mul", {c.op("Mul", {c.gradOut(0), y}), c.op("Sub", {c.scalar(1), y})}));
}

void reluGrad(GradContext& c) {
    // x > 0 exactly where y > 0, so either tensor serves.
    ValueId s = c.pickSaved({c.output(0), c.input(0)});
    c.setGradIn(0, c.op("Where", {c.op("Greater", {s, c.scalar(0)}), c.gradOut(0), c.scalar(0)}));
}

void leakyReluGrad(GradContext& c) {
    const float alpha = c.node().attrFloat("alpha", 0.01f);
    // With alpha > 0 the sign of y is the sign of x; otherwise only x tells.
    ValueId s = alpha > 0 ? c.pickSaved({c.output(0), c.input(0)}) : c.input(0);
    const ValueId g = c.gradOut(0);
    c.setGradIn(0, c.op("Where", {c.op("Greater", {s, c.scalar(0)}), g, c.op("Mul", {g, c.scalar(alpha)})}));
}

void erfGrad(GradContext& c) {
    // d erf(x) = 2/√π · e^(−x²).
    const ValueId x = c.input(0);
    ValueId e = c.op("Exp", {c.op("Neg", {c.op("Mul", {x, x})})});
    c.setGradIn(0, c.op("Mul", {c.gradOut(0), c.op("Mul", {e, c.scalar(2.0 / std::sqrt(M_PI))})}));
}

void whereGrad(GradContext& c) {
    const ValueId cond = c.input(0), g = c.gradOut(0);
    if (c.needsGrad(1)) c.setGradIn(1, c.sumToShapeOf(c.op("Where", {cond, g, c.scalar(0)}), c.input(1)));
    if (c.needsGrad(2)) c.setGradIn(2, c.sumToShapeOf(c.op("Where", {cond, c.scalar(0), g}), c.input(2)));
}

void expandGrad(GradContext& c) { c.setGradIn(0, c.sumToShapeOf(c.gradOut(0), c.input(0))); }

}  // namespace

void registerElementwiseGradients(GradientRegistry& r) {
    r.add("Add", addGrad);
    r.add("Sub", subGrad);
    r.add("Mul", mulGrad);
    r.add("Div", divGrad);
    r.add("Pow", powGrad);
    r.add("Sum", sumGrad);
    r.add("Neg", negGrad);
    r.add("Identity", identityGrad);
    r.add("Dropout", dropoutGrad, {1, 2});
    r.add("Cast", castGrad);
    r.add("Sqrt", sqrtGrad);
    r.add("Exp", expGrad);
    r.add("Log", logGrad);
    r.add("Sin", sinGrad);
    r.add("Cos", cosGrad);
    r.add("Tanh", tanhGrad);
    r.add("Sigmoid", sigmoidGrad);
    r.add("Relu", reluGrad);
    r.add("LeakyRelu", leakyReluGrad);
    r.add("Erf", erfGrad);
    r.add("Where", whereGrad, {0});
    r.add("Expand", expandGrad, {1});
}

}  // namespace passlens::autodiff
