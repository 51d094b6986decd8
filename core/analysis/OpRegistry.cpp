#include "analysis/OpRegistry.h"

#include <optional>
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

namespace {

/// True when two shapes are equal at run time for every input: same rank, and each pair of dims
/// either static and equal or the same named symbol (ONNX: one dim_param name is one value).
bool provablySameShape(const std::optional<ir::Shape>& a, const std::optional<ir::Shape>& b) {
    if (!a || !b || a->rank() != b->rank()) return false;
    for (size_t i = 0; i < a->rank(); ++i) {
        const ir::Dim& x = a->dims[i];
        const ir::Dim& y = b->dims[i];
        if (x.isStatic() && y.isStatic() && *x.value == *y.value) continue;
        if (!x.isStatic() && !y.isStatic() && !x.param.empty() && x.param == y.param) continue;
        return false;
    }
    return true;
}

}  // namespace

OpPattern patternOf(const ir::Graph& g, ir::NodeId n) {
    const auto& node = g.node(n);
    OpPattern p = patternOfOpType(node.opType, node.domain);
    if (p != OpPattern::Broadcast || node.outputs.empty() || node.outputs[0] == ir::kNone) return p;
    // Only shapes proven equal (static, or the same named symbols) show that nothing is broadcast.
    const auto& outShape = g.value(node.outputs[0]).type.shape;
    for (ir::ValueId v : node.inputs) {
        if (v == ir::kNone) continue;
        if (!provablySameShape(g.value(v).type.shape, outShape)) return p;
    }
    return OpPattern::ElemWise;  // no input is actually broadcast
}

OpPattern edgePattern(const ir::Graph& g, ir::NodeId consumer, ir::ValueId input) {
    const auto& node = g.node(consumer);
    OpPattern p = patternOfOpType(node.opType, node.domain);
    if (p != OpPattern::Broadcast || node.outputs.empty() || node.outputs[0] == ir::kNone || input == ir::kNone) return p;
    if (provablySameShape(g.value(input).type.shape, g.value(node.outputs[0]).type.shape)) return OpPattern::ElemWise;
    return p;
}

}  // namespace passlens::analysis

namespace passlens::analysis {

namespace {

// Unary activations and math, binary arithmetic, and ops that only relabel a buffer (Identity,
// Dropout at inference). Cast is excluded: the element type changes. Moved here from the memory
// planner's private table.
const std::set<std::string_view>& inplaceOps() {
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

bool isCommutative(std::string_view opType, std::string_view domain) {
    if (!domain.empty() && domain != "ai.onnx") return false;
    static const std::set<std::string_view> ops = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "And", "Or", "Xor", "Equal"};
    return ops.count(opType) > 0;
}

bool isNondeterministic(const ir::Graph& g, ir::NodeId n) {
    const ir::Node& node = g.node(n);
    if (!node.domain.empty() && node.domain != "ai.onnx") return false;
    static const std::set<std::string_view> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                      "RandomUniformLike", "Multinomial", "Bernoulli"};
    if (random.count(node.opType)) return true;
    // Dropout draws a mask only in training mode (input 2, opset 12+).
    return node.opType == "Dropout" && node.inputs.size() > 2 && node.inputs[2] != ir::kNone;
}

namespace {

/// Static dims of an optional input (kNone: absent).
std::optional<std::vector<int64_t>> staticDims(const ir::Graph& g, ir::ValueId v) {
    return v == ir::kNone ? std::nullopt : g.value(v).staticDims();
}

double product(const std::vector<int64_t>& dims, size_t from = 0) {
    double p = 1;
    for (size_t i = from; i < dims.size(); ++i) p *= static_cast<double>(dims[i]);
    return p;
}

ir::DataType elemTypeOf(const ir::Graph& g, ir::ValueId v) {
    const auto& val = g.value(v);
    return val.initializer ? val.initializer->dtype : val.type.elemType;
}

}  // namespace

bool isInplaceElementwise(std::string_view opType, std::string_view domain) {
    if (!domain.empty() && domain != "ai.onnx") return false;
    return inplaceOps().count(opType) != 0;
}

OpCost costOf(const ir::Graph& g, ir::NodeId id) {
    const auto& n = g.node(id);
    OpCost c;
    auto missing = [&](const std::string& what) {
        c.known = false;
        if (c.note.empty()) c.note = what;
    };
    // Bytes: every tensor read or written once.
    auto addBytes = [&](ir::ValueId v, const char* role) {
        if (v == ir::kNone) return;
        auto d = staticDims(g, v);
        size_t es = ir::elementSize(elemTypeOf(g, v));
        if (!d || es == 0) { missing(std::string(role) + " '" + g.value(v).name + "' has no static shape or fixed-size type"); return; }
        c.bytes += product(*d) * static_cast<double>(es);
    };
    for (ir::ValueId v : n.inputs) addBytes(v, "input");
    for (ir::ValueId v : n.outputs) addBytes(v, "output");

    const bool standard = n.domain.empty() || n.domain == "ai.onnx";
    const ir::ValueId out0 = n.outputs.empty() ? ir::kNone : n.outputs[0];
    const auto outDims = staticDims(g, out0);
    const auto inDims = n.inputs.empty() ? std::nullopt : staticDims(g, n.inputs[0]);
    const double outElems = outDims ? product(*outDims) : 0;
    if (!standard || n.hasSubgraphs()) {
        c.known = false;
        c.note = "no cost rule for " + n.opType + (standard ? "" : " (domain " + n.domain + ")");
        return c;
    }
    const std::string& op = n.opType;
    auto needOut = [&] { if (!outDims) missing("output shape of " + n.displayName() + " is not static"); return outDims.has_value(); };
    auto needIn = [&] { if (!inDims) missing("input shape of " + n.displayName() + " is not static"); return inDims.has_value(); };

    if (op == "Conv") {
        // Each output element is a dot product over Cin/group × kernel: 2 flops per multiply-add.
        auto w = n.inputs.size() > 1 ? staticDims(g, n.inputs[1]) : std::nullopt;
        if (!w || w->size() < 2) { missing("Conv weights have no static shape"); return c; }
        if (!needOut()) return c;
        c.flops = 2.0 * outElems * product(*w, 1) + (n.inputs.size() > 2 && n.inputs[2] != ir::kNone ? outElems : 0);
    } else if (op == "ConvTranspose") {
        auto w = n.inputs.size() > 1 ? staticDims(g, n.inputs[1]) : std::nullopt;
        if (!w || w->size() < 2 || !needIn()) { missing("ConvTranspose shapes are not static"); return c; }
        c.flops = 2.0 * product(*inDims) * product(*w, 1);
    } else if (op == "MatMul" || op == "Gemm") {
        if (!needIn() || !needOut() || inDims->empty()) return c;
        int64_t k = op == "Gemm" && n.attrInt("transA", 0) ? (*inDims)[0] : inDims->back();
        c.flops = 2.0 * outElems * static_cast<double>(k) + (op == "Gemm" && n.inputs.size() > 2 ? outElems : 0);
    } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
        if (!needOut()) return c;
        c.flops = outElems * product(n.attrInts("kernel_shape"));
    } else if (patternOfOpType(op) == OpPattern::CommReduce || op == "GlobalAveragePool" || op == "GlobalMaxPool") {
        if (!needIn()) return c;
        c.flops = product(*inDims);  // one accumulate per input element
    } else if (op == "BatchNormalization" || op == "InstanceNormalization") {
        if (!needOut()) return c;
        c.flops = (op == "BatchNormalization" ? 2.0 : 7.0) * outElems;  // scale+shift (+ mean/var for instance)
    } else if (op == "LayerNormalization") {
        if (!needOut()) return c;
        c.flops = 8.0 * outElems;  // mean, centre, square, mean, rsqrt, scale, shift
    } else if (op == "Softmax" || op == "LogSoftmax") {
        if (!needOut()) return c;
        c.flops = 4.0 * outElems;  // max, exp, sum, divide
    } else if (op == "Constant" || patternOfOpType(op) == OpPattern::Injective || op == "Shape" || op == "Size" ||
               op == "ConstantOfShape" || op == "Range") {
        c.flops = 0;  // data movement only
    } else if (patternOfOpType(op) == OpPattern::ElemWise || patternOfOpType(op) == OpPattern::Broadcast) {
        if (!needOut()) return c;
        c.flops = outElems;  // one operation per output element
    } else {
        c.known = false;
        c.note = "no cost rule for " + op;
    }
    return c;
}

}  // namespace passlens::analysis
