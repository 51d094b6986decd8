// ONNX Runtime's SimplifiedLayerNormFusion (layer_norm_fusion.cc) and SkipLayerNormFusion
// (skip_layer_norm_fusion.cc).
//   SimplifiedLayerNorm: x → Pow(2) → ReduceMean(last axis) → Add(ε) → Sqrt → Div(x, ·) → Mul(γ)
//                        → SimplifiedLayerNormalization(x, γ, axis -1, epsilon ε, stash_type 1)
//   SkipLayerNorm:       LayerNormalization(Add(a, b), γ, β) with a, b 3-D of equal dims (dim 0 may be
//                        the same symbol), the Add read only by the LayerNormalization and not a graph
//                        output → SkipLayerNormalization(a, b, γ, β, epsilon); a second Add of a 1-D
//                        constant bias on either Add input joins as the fifth input (Formats 1 and 2).
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

const std::vector<DataType> kLnTypes{DataType::Float16, DataType::Float, DataType::BFloat16};

bool fuseSimplified(Rewriter& rw, NodeId powId) {
    const Graph& g = rw.graph();
    const Node& pow = g.node(powId);
    if (pow.inputs.size() != 2 || !constantEquals(g, pow.inputs[1], 2.0)) return false;
    const ValueId x = pow.inputs[0];
    auto refuse = [&](NodeId at, const std::string& why, std::vector<ValueId> edges = {}) {
        ort::refuse(rw, {powId, at}, "SimplifiedLayerNormFusion: not applied at " + q(g, powId) + ": " + why, std::move(edges));
        return false;
    };
    NodeId mean = soleReader(g, powId, "ReduceMean");
    if (mean == kNone) return false;  // x² not averaged: not a norm
    const Node& rm = g.node(mean);
    std::vector<int64_t> axes = rm.attrInts("axes");
    if (axes.empty() && rm.inputs.size() > 1 && rm.inputs[1] != kNone)
        if (const TensorPtr t = match::constantOf(g, rm.inputs[1]); t && t->dtype == DataType::Int64)
            axes.assign(t->as<int64_t>(), t->as<int64_t>() + t->elementCount());
    auto sx = shapeOf(g, x);
    const bool lastAxis = axes.size() == 1 && (axes[0] == -1 || (sx && axes[0] == int64_t(sx->rank()) - 1));
    if (!lastAxis) return refuse(mean, q(g, mean) + " does not reduce over the last axis only");
    if (outputEdges(g, mean) != 1) return refuse(mean, "the ReduceMean output is " + readBy(g, mean) + ", ONNX Runtime needs 1", {rm.outputs[0]});
    NodeId add = soleReader(g, mean, "Add");
    if (add == kNone) return refuse(mean, "the ReduceMean is not read by an Add of ε", {rm.outputs[0]});
    ValueId epsV = g.node(add).inputs[0] == rm.outputs[0] ? g.node(add).inputs[1] : g.node(add).inputs[0];
    auto eps = constantScalar(g, epsV);
    if (!eps) return refuse(add, "ε " + qv(g, epsV) + " is not a constant scalar", {epsV});
    if (outputEdges(g, add) != 1) return refuse(add, "the Add output is " + readBy(g, add) + ", ONNX Runtime needs 1", {g.node(add).outputs[0]});
    NodeId sqrt = soleReader(g, add, "Sqrt");
    if (sqrt == kNone) return refuse(add, "the Add of ε is not read by a Sqrt", {g.node(add).outputs[0]});
    if (outputEdges(g, sqrt) != 1) return refuse(sqrt, "the Sqrt output is " + readBy(g, sqrt) + ", ONNX Runtime needs 1", {g.node(sqrt).outputs[0]});
    NodeId div = soleReader(g, sqrt, "Div");
    if (div == kNone || g.node(div).inputs[0] != x || g.node(div).inputs[1] != g.node(sqrt).outputs[0])
        return refuse(sqrt, "the Sqrt is not the divisor of a Div of the Pow's input", {g.node(sqrt).outputs[0]});
    if (outputEdges(g, div) != 1) return refuse(div, "the Div output is " + readBy(g, div) + ", ONNX Runtime needs 1", {g.node(div).outputs[0]});
    NodeId mul = soleReader(g, div, "Mul");
    if (mul == kNone) return refuse(div, "the Div is not read by a Mul with the scale", {g.node(div).outputs[0]});
    ValueId scale = g.node(mul).inputs[0] == g.node(div).outputs[0] ? g.node(mul).inputs[1] : g.node(mul).inputs[0];
    if (!match::constantOf(g, scale)) return refuse(mul, "the scale " + qv(g, scale) + " is not an initializer", {scale});
    if (!inputsTypedIn(g, powId, kLnTypes) && !elemTypeIn(g, x, kLnTypes)) return refuse(powId, "SimplifiedLayerNormalization takes float16, float or bfloat16");
    const std::string powName = q(g, powId);
    NodeId fused = rw.replaceNodes({powId, mean, add, sqrt, div, mul}, "SimplifiedLayerNormalization", {x, scale},
                                   {g.node(mul).outputs[0]},
                                   {Attribute::makeInt("axis", -1), Attribute::makeFloat("epsilon", float(*eps)), Attribute::makeInt("stash_type", 1)},
                                   "SimplifiedLayerNormFusion: x / sqrt(mean(x²) + ε) · γ",
                                   g.node(mul).name.empty() ? "SimplifiedLayerNormalization" : g.node(mul).name + "/SimplifiedLayerNormFusion/");
    rw.applied({fused}, "SimplifiedLayerNormFusion: 6 nodes from " + powName + " fused into SimplifiedLayerNormalization");
    return true;
}

/// CheckFirstAdd: the reason `add` cannot be the skip Add, or empty when it can.
std::string firstAddProblem(const Graph& g, NodeId add) {
    if (!inputsTypedIn(g, add, kLnTypes)) return q(g, add) + "'s inputs are not all float16, float or bfloat16";
    if (outputEdges(g, add) != 1) return "the Add output " + qv(g, g.node(add).outputs[0]) + " is " + readBy(g, add) + ", ONNX Runtime needs 1";
    auto s0 = shapeOf(g, g.node(add).inputs[0]), s1 = shapeOf(g, g.node(add).inputs[1]);
    if (!s0 || !s1) return "the shape of " + qv(g, g.node(add).inputs[!s0 ? 0 : 1]) + " is unknown";
    if (s0->rank() != 3 || s1->rank() != 3)
        return "the Add inputs have shapes " + s0->toString() + " and " + s1->toString() + ", ONNX Runtime needs both 3-D";
    for (size_t i = 0; i < 3; ++i) {
        const Dim &a = s0->dims[i], &b = s1->dims[i];
        const bool equalValues = a.value && b.value && *a.value == *b.value;
        const bool sameSymbol = i == 0 && !a.value && !b.value && !a.param.empty() && a.param == b.param;
        if (!equalValues && !sameSymbol)
            return "the Add inputs have shapes " + s0->toString() + " and " + s1->toString() + ": dim " + std::to_string(i) +
                   (i == 0 ? " is neither the same number nor the same symbol" : " is not the same number in both");
    }
    return {};
}

/// CheckSecondAdd: a bias Add (3-D input, 1-D constant second input of the last dim's length).
bool isBiasAdd(const Graph& g, NodeId add) {
    if (!inputsTypedIn(g, add, kLnTypes) || outputEdges(g, add) != 1 || producesGraphOutput(g, add)) return false;
    const Node& a = g.node(add);
    if (a.inputs.size() != 2 || !match::constantOf(g, a.inputs[1])) return false;
    auto s0 = shapeOf(g, a.inputs[0]), s1 = shapeOf(g, a.inputs[1]);
    return s0 && s1 && s0->rank() == 3 && s1->rank() == 1 && s0->dims[2].value && s1->dims[0].value &&
           *s0->dims[2].value == *s1->dims[0].value;
}

bool fuseSkip(Rewriter& rw, NodeId lnId) {
    const Graph& g = rw.graph();
    const Node& ln = g.node(lnId);
    const std::string at = "SkipLayerNormFusion: not applied at " + q(g, lnId) + ": ";
    if (!inputsTypedIn(g, lnId, kLnTypes)) return false;
    NodeId add1 = producer(g, ln.inputs[0], "Add");
    if (add1 == kNone) {
        const NodeId p = g.value(ln.inputs[0]).producer;
        refuse(rw, {lnId}, at + "its input " + qv(g, ln.inputs[0]) + " is " +
                              (p == kNone ? std::string("not produced by a node") : "produced by " + g.node(p).opType + " " + q(g, p)) +
                              ", ONNX Runtime needs an Add", {ln.inputs[0]});
        return false;
    }
    if (std::string why = firstAddProblem(g, add1); !why.empty()) {
        refuse(rw, {lnId, add1}, at + why, {g.node(add1).outputs[0]});
        return false;
    }
    if (producesGraphOutput(g, add1)) {
        refuse(rw, {lnId, add1}, at + "the Add output " + qv(g, g.node(add1).outputs[0]) + " is a graph output", {g.node(add1).outputs[0]});
        return false;
    }
    const Node& a1 = g.node(add1);
    std::vector<ValueId> inputs{a1.inputs[0], a1.inputs[1], ln.inputs[1], ln.inputs.size() > 2 ? ln.inputs[2] : kNone};
    std::vector<NodeId> group{add1, lnId};
    std::string format = "Format 3";
    // Formats 1 and 2: a bias Add producing the first or the second input of the skip Add.
    for (size_t side : {size_t(0), size_t(1)}) {
        NodeId add2 = producer(g, a1.inputs[side], "Add");
        if (add2 == kNone || !isBiasAdd(g, add2)) continue;
        inputs[side] = g.node(add2).inputs[0];
        inputs.push_back(g.node(add2).inputs[1]);
        group.insert(group.begin(), add2);
        format = side == 0 ? "Format 1" : "Format 2";
        break;
    }
    // No beta: with a bias fifth input the slot stays empty, otherwise it is dropped.
    if (inputs.size() == 4 && inputs[3] == kNone) inputs.pop_back();
    std::vector<Attribute> attrs;
    if (const Attribute* eps = ln.attr("epsilon")) attrs.push_back(*eps);
    else attrs.push_back(Attribute::makeFloat("epsilon", 1e-12f));
    useMicrosoftDomain(rw);
    const std::string what = q(g, add1) + " + " + q(g, lnId);
    NodeId fused = rw.replaceNodes(group, "SkipLayerNormalization", inputs, {ln.outputs[0]}, std::move(attrs),
                                   "SkipLayerNormFusion (" + format + "): " + what, "SkipLayerNormalization", kMSDomain);
    rw.applied({fused}, "SkipLayerNormFusion (" + format + "): " + what + " fused into SkipLayerNormalization");
    return true;
}

}  // namespace

std::vector<RewriteRule> simplifiedLayerNormFusion() {
    return {{"SimplifiedLayerNormFusion", {"Pow"}, "", fuseSimplified}};
}

std::vector<RewriteRule> skipLayerNormFusion() {
    return {{"SkipLayerNormFusion", {"LayerNormalization"}, "", fuseSkip}};
}

}  // namespace passlens::passes::ort
