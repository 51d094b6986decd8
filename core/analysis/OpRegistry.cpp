#include "analysis/OpRegistry.h"

#include <set>

namespace passlens::analysis {

std::string_view patternName(OpPattern p) {
    switch (p) {
    case OpPattern::ElemWise: return "ElemWise";
    case OpPattern::Broadcast: return "Broadcast";
    case OpPattern::Injective: return "Injective";
    case OpPattern::CommReduce: return "CommReduce";
    case OpPattern::OutEWiseFusable: return "OutEWiseFusable";
    case OpPattern::Opaque: return "Opaque";
    }
    return "Opaque";
}

OpPattern patternOfOpType(std::string_view op, std::string_view domain) {
    if (!domain.empty() && domain != "ai.onnx") return OpPattern::Opaque;
    static const std::set<std::string_view> elemwise = {
        "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Exp", "Log", "Neg", "Abs", "Sqrt", "Reciprocal", "Floor",
        "Ceil", "Round", "Sign", "Erf", "Sin", "Cos", "Not", "Identity", "Cast", "Clip", "HardSigmoid",
        "HardSwish", "Elu", "Selu", "Softplus", "Softsign", "ThresholdedRelu", "IsNaN", "IsInf", "Celu",
        "Gelu", "Mish", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Dropout"};
    static const std::set<std::string_view> broadcast = {
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Less", "Greater",
        "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu", "Mod", "BitShift",
        // Inference BatchNormalization is a per-channel affine map: x·a[c] + b[c].
        "BatchNormalization"};
    static const std::set<std::string_view> injective = {
        "Reshape", "Transpose", "Concat", "Slice", "Squeeze", "Unsqueeze", "Flatten", "Gather", "Expand",
        "Tile", "Pad", "Split", "DepthToSpace", "SpaceToDepth", "Resize", "Upsample", "GatherElements"};
    static const std::set<std::string_view> reduce = {
        "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "ArgMax", "ArgMin", "GlobalAveragePool",
        "GlobalMaxPool"};
    // TVM registers conv, dense, batch_matmul and the pools as OUT_ELEMWISE_FUSABLE.
    static const std::set<std::string_view> outEWise = {"Conv", "ConvTranspose", "MatMul", "Gemm", "MaxPool",
                                                        "AveragePool"};
    if (elemwise.count(op)) return OpPattern::ElemWise;
    if (broadcast.count(op)) return OpPattern::Broadcast;
    if (injective.count(op)) return OpPattern::Injective;
    if (reduce.count(op)) return OpPattern::CommReduce;
    if (outEWise.count(op)) return OpPattern::OutEWiseFusable;
    return OpPattern::Opaque;  // control flow, Softmax, LSTM, custom domains, ...
}

OpPattern patternOf(const ir::Graph& g, ir::NodeId n) {
    const auto& node = g.node(n);
    OpPattern p = patternOfOpType(node.opType, node.domain);
    if (p != OpPattern::Broadcast || node.outputs.empty() || node.outputs[0] == ir::kNone) return p;
    // Only static shapes prove that nothing is broadcast (symbolic dims may still differ at run time).
    const auto& outShape = g.value(node.outputs[0]).type.shape;
    if (!outShape || !outShape->isStatic()) return p;
    for (ir::ValueId v : node.inputs) {
        if (v == ir::kNone) continue;
        const auto& s = g.value(v).type.shape;
        if (!s || !s->isStatic() || !(*s == *outShape)) return p;
    }
    return OpPattern::ElemWise;  // no input is actually broadcast
}

OpPattern edgePattern(const ir::Graph& g, ir::NodeId consumer, ir::ValueId input) {
    const auto& node = g.node(consumer);
    OpPattern p = patternOfOpType(node.opType, node.domain);
    if (p != OpPattern::Broadcast || node.outputs.empty() || node.outputs[0] == ir::kNone || input == ir::kNone) return p;
    const auto& outShape = g.value(node.outputs[0]).type.shape;
    const auto& inShape = g.value(input).type.shape;
    if (outShape && inShape && outShape->isStatic() && inShape->isStatic() && *outShape == *inShape) return OpPattern::ElemWise;
    return p;
}

}  // namespace passlens::analysis
