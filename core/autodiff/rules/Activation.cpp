// Gradients of the piecewise and min/max activations real exports use: HardSwish, HardSigmoid,
// Gelu (opset 20), Clip, Min, Max, Abs, Reciprocal. Where a function has a kink, the gradient on
// the boundary follows PyTorch's autograd so trained models match it.
#include <cmath>

#include "autodiff/GradientBuilder.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

ValueId where(GradContext& c, ValueId cond, ValueId a, ValueId b) { return c.op("Where", {cond, a, b}); }

void hardSwishGrad(GradContext& c) {
    // y = x·clamp(x/6 + 1/2, 0, 1): dx = 0 below −3, g·(x/3 + 1/2) up to 3, g above (torch's
    // hardswish_backward, boundaries included).
    const ValueId x = c.input(0), g = c.gradOut(0);
    ValueId middle = c.op("Mul", {g, c.op("Add", {c.op("Div", {x, c.scalar(3)}), c.scalar(0.5)})});
    ValueId upper = where(c, c.op("LessOrEqual", {x, c.scalar(3)}), middle, g);
    c.setGradIn(0, where(c, c.op("Less", {x, c.scalar(-3)}), c.scalar(0), upper));
}

void hardSigmoidGrad(GradContext& c) {
    // y = clamp(αx + β, 0, 1): dx = α·g strictly inside the linear part.
    const double alpha = c.node().attrFloat("alpha", 0.2f), beta = c.node().attrFloat("beta", 0.5f);
    ValueId t = c.op("Add", {c.op("Mul", {c.input(0), c.scalar(alpha)}), c.scalar(beta)});
    ValueId inside = c.op("And", {c.op("Greater", {t, c.scalar(0)}), c.op("Less", {t, c.scalar(1)})});
    c.setGradIn(0, where(c, inside, c.op("Mul", {c.gradOut(0), c.scalar(alpha)}), c.scalar(0)));
}

void geluGrad(GradContext& c) {
    const ValueId x = c.input(0), g = c.gradOut(0);
    if (c.node().attrString("approximate", "none") == "tanh") {
        // u = √(2/π)(x + 0.044715x³), y = x/2·(1 + tanh u):
        // dy/dx = (1 + tanh u)/2 + x/2·(1 − tanh²u)·√(2/π)(1 + 3·0.044715x²).
        const double k = std::sqrt(2.0 / M_PI);
        ValueId x2 = c.op("Mul", {x, x});
        ValueId u = c.op("Mul", {c.op("Add", {x, c.op("Mul", {c.op("Mul", {x2, x}), c.scalar(0.044715)})}), c.scalar(k)});
        ValueId t = c.op("Tanh", {u});
        ValueId left = c.op("Mul", {c.op("Add", {t, c.scalar(1)}), c.scalar(0.5)});
        ValueId du = c.op("Mul", {c.op("Add", {c.op("Mul", {x2, c.scalar(3 * 0.044715)}), c.scalar(1)}), c.scalar(k)});
        ValueId right = c.op("Mul", {c.op("Mul", {c.op("Mul", {x, c.scalar(0.5)}), c.op("Sub", {c.scalar(1), c.op("Mul", {t, t})})}), du});
        c.setGradIn(0, c.op("Mul", {g, c.op("Add", {left, right})}));
        return;
    }
    // y = x·Φ(x): dy/dx = Φ(x) + x·φ(x), Φ(x) = (1 + erf(x/√2))/2, φ(x) = e^(−x²/2)/√(2π).
    ValueId cdf = c.op("Mul", {c.op("Add", {c.op("Erf", {c.op("Mul", {x, c.scalar(1 / std::sqrt(2.0))})}), c.scalar(1)}), c.scalar(0.5)});
    ValueId pdf = c.op("Mul", {c.op("Exp", {c.op("Mul", {c.op("Mul", {x, x}), c.scalar(-0.5)})}), c.scalar(1 / std::sqrt(2 * M_PI))});
    c.setGradIn(0, c.op("Mul", {g, c.op("Add", {cdf, c.op("Mul", {x, pdf})})}));
}

void clipGrad(GradContext& c) {
    // g where min ≤ x ≤ max (torch's clamp_backward keeps the boundaries).
    const ValueId x = c.input(0);
    ValueId pass = kNone;
    auto bound = [&](size_t slot, const char* attr, const char* cmp) {
        ValueId b = kNone;
        if (c.opset() >= 11) {
            if (c.input(slot) != kNone) b = c.input(slot);
        } else if (c.node().attr(attr)) {
            b = c.scalar(c.node().attrFloat(attr, 0.0f));
        }
        if (b == kNone) return;
        ValueId ok = c.op(cmp, {x, b});
        pass = pass == kNone ? ok : c.op("And", {pass, ok});
    };
    bound(1, "min", "GreaterOrEqual");
    bound(2, "max", "LessOrEqual");
    c.setGradIn(0, pass == kNone ? c.gradOut(0) : where(c, pass, c.gradOut(0), c.scalar(0)));
}

void minMaxGrad(GradContext& c) {
    // Each input gets g where it equals the result; ties share it evenly (as torch's binary
    // minimum/maximum backward does).
    const ValueId y = c.output(0), g = c.gradOut(0);
    ValueId ties = kNone;
    std::vector<ValueId> masks;
    for (size_t i = 0; i < c.inputCount(); ++i) {
        ValueId m = c.op("Cast", {c.op("Equal", {c.input(i), y})}, {Attribute::makeInt("to", int64_t(c.floatType()))});
        masks.push_back(m);
        ties = ties == kNone ? m : c.op("Add", {ties, m});
    }
    ValueId share = c.op("Div", {g, ties});
    for (size_t i = 0; i < c.inputCount(); ++i)
        if (c.needsGrad(i)) c.setGradIn(i, c.sumToShapeOf(c.op("Mul", {share, masks[i]}), c.input(i)));
}

void absGrad(GradContext& c) { c.setGradIn(0, c.op("Mul", {c.gradOut(0), c.op("Sign", {c.input(0)})})); }

void reciprocalGrad(GradContext& c) {
    // y = 1/x: dx = −g·y².
    const ValueId y = c.output(0);
    c.setGradIn(0, c.op("Neg", {c.op("Mul", {c.gradOut(0), c.op("Mul", {y, y})})}));
}

}  // namespace

void registerActivationGradients(GradientRegistry& r) {
    r.add("HardSwish", hardSwishGrad);
    r.add("HardSigmoid", hardSigmoidGrad);
    r.add("Gelu", geluGrad);
    r.add("Clip", clipGrad, {1, 2});
    r.add("Min", minMaxGrad);
    r.add("Max", minMaxGrad);
    r.add("Abs", absGrad);
    r.add("Reciprocal", reciprocalGrad);
}

}  // namespace passlens::autodiff
