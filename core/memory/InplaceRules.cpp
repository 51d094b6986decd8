#include "memory/InplaceRules.h"

#include <set>
#include <string_view>

namespace passlens::memory {

namespace {
// Unary activations and math, binary arithmetic (only the same-size input qualifies, broadcast
// inputs are smaller and never chosen), and ops that only relabel a buffer (Identity, Dropout at
// inference, Cast between same-size types is excluded: the element type must match).
const std::set<std::string_view>& elementwiseOps() {
    static const std::set<std::string_view> ops = {
        "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish",
        "Tanh", "Softplus", "Softsign", "Gelu", "Mish", "ThresholdedRelu", "Clip", "Abs", "Neg",
        "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Erf", "Sin", "Cos",
        "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Not",
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "And", "Or", "Xor",
        "BitShift", "Identity", "Dropout", "BatchNormalization"};
    return ops;
}
}  // namespace

bool isInplaceElementwise(const std::string& domain, const std::string& opType) {
    if (!domain.empty() && domain != "ai.onnx") return false;
    return elementwiseOps().count(opType) != 0;
}

}  // namespace passlens::memory
