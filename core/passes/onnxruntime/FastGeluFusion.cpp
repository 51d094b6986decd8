// ONNX Runtime's FastGeluFusion (fast_gelu_fusion.cc): the tanh approximation of GELU as GPT-2
// exports write it → com.microsoft FastGelu(x), float only on the CPU provider.
//   first formula:  Mul(x, 0.044715) → Mul(·, x) → Add(1) → Mul(·, Mul(x, √(2/π)))
//   second formula: Pow(x, 3) → Mul(0.044715) → Add(x) → Mul(√(2/π))
//   both then:      → Tanh → Add(1) → Mul(·, Mul(x, 0.5))
// Every node but the last is read once and none writes a graph output (CheckNode). The fp16 form
// with Casts around Pow (ORTModule's) is not reproduced: a refusal says so.
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

constexpr double kCubic = 0.044715, kSqrt2OverPi = 0.7978845834732056;

/// The input of `n` other than `v` (n is binary).
ValueId otherInput(const Graph& g, NodeId n, ValueId v) {
    const Node& node = g.node(n);
    return node.inputs[0] == v ? node.inputs[1] : node.inputs[0];
}

/// CheckNode: a float node of this op type, read once (when `single`), writing no graph output.
bool checkNode(const Graph& g, NodeId n, const std::string& op, bool single) {
    return isOp(g, n, op) && inputsTypedIn(g, n, {DataType::Float}) && (!single || outputEdges(g, n) == 1) && !producesGraphOutput(g, n);
}

/// The sole reader of `n` when `n` has exactly one output edge.
NodeId next(const Graph& g, NodeId n) { return outputEdges(g, n) == 1 ? outputNodes(g, n)[0] : kNone; }

bool fuseFastGelu(Rewriter& rw, NodeId anchor) {
    const Graph& g = rw.graph();
    const Node& a = g.node(anchor);
    if (a.inputs.size() != 2 || !inputsTypedIn(g, anchor, {DataType::Float}) || outputEdges(g, anchor) != 1) return false;
    ValueId x = kNone;
    NodeId tanhInput = kNone;
    std::vector<NodeId> group{anchor};
    auto refuseAt = [&](NodeId at, const std::string& why) {
        ort::refuse(rw, {anchor, at}, "FastGeluFusion: not applied at " + q(g, anchor) + ": " + why);
        return false;
    };
    if (a.opType == "Mul") {  // first formula
        if (constantEquals(g, a.inputs[0], kCubic)) x = a.inputs[1];
        else if (constantEquals(g, a.inputs[1], kCubic)) x = a.inputs[0];
        else return false;
        const NodeId mul2 = next(g, anchor);
        if (!checkNode(g, mul2, "Mul", true) || otherInput(g, mul2, a.outputs[0]) != x) return false;
        const NodeId add1 = next(g, mul2);
        if (!checkNode(g, add1, "Add", true) || !constantEquals(g, otherInput(g, add1, g.node(mul2).outputs[0]), 1.0))
            return refuseAt(mul2, "0.044715·x² is not followed by an Add of 1 read once");
        const NodeId mul3 = next(g, add1);
        if (!checkNode(g, mul3, "Mul", true)) return refuseAt(add1, "1 + 0.044715·x² is not multiplied (by a Mul read once)");
        const NodeId mul4 = g.value(otherInput(g, mul3, g.node(add1).outputs[0])).producer;
        if (!checkNode(g, mul4, "Mul", true) || otherInput(g, mul4, x) == x ||
            !(constantEquals(g, g.node(mul4).inputs[0], kSqrt2OverPi) || constantEquals(g, g.node(mul4).inputs[1], kSqrt2OverPi)) ||
            (g.node(mul4).inputs[0] != x && g.node(mul4).inputs[1] != x))
            return refuseAt(mul3, "the other factor is not x · 0.7978845834732056 (√(2/π)) read once");
        group.insert(group.end(), {mul2, add1, mul4, mul3});
        tanhInput = mul3;
    } else {  // second formula: Pow(x, 3)
        if (!constantEquals(g, a.inputs[1], 3.0)) return false;
        x = a.inputs[0];
        if (g.value(x).producer != kNone && isOp(g, g.value(x).producer, "Cast"))
            return refuseAt(g.value(x).producer, "x comes through a Cast (the fp16 form), which PassLens does not reproduce");
        const NodeId mul1 = next(g, anchor);
        if (!checkNode(g, mul1, "Mul", true) || !constantEquals(g, otherInput(g, mul1, a.outputs[0]), kCubic)) return false;
        const NodeId add1 = next(g, mul1);
        if (!checkNode(g, add1, "Add", true) || otherInput(g, add1, g.node(mul1).outputs[0]) != x)
            return refuseAt(mul1, "0.044715·x³ is not added to x by an Add read once");
        const NodeId mul2 = next(g, add1);
        if (!checkNode(g, mul2, "Mul", true) || !constantEquals(g, otherInput(g, mul2, g.node(add1).outputs[0]), kSqrt2OverPi))
            return refuseAt(add1, "x + 0.044715·x³ is not multiplied by 0.7978845834732056 (√(2/π)) in a Mul read once");
        group.insert(group.end(), {mul1, add1, mul2});
        tanhInput = mul2;
    }
    const NodeId tanhNode = next(g, tanhInput);
    if (!checkNode(g, tanhNode, "Tanh", true)) return refuseAt(tanhInput, "the argument does not go into a Tanh read once");
    const NodeId add2 = next(g, tanhNode);
    if (!checkNode(g, add2, "Add", true) || !constantEquals(g, otherInput(g, add2, g.node(tanhNode).outputs[0]), 1.0))
        return refuseAt(tanhNode, "the Tanh is not followed by an Add of 1 read once");
    const NodeId mul5 = next(g, add2);
    if (!checkNode(g, mul5, "Mul", false)) return refuseAt(add2, "1 + tanh(·) is not multiplied by a Mul that writes no graph output");
    const NodeId mul6 = g.value(otherInput(g, mul5, g.node(add2).outputs[0])).producer;
    if (!checkNode(g, mul6, "Mul", false)) return refuseAt(mul5, "the other factor is not a Mul");
    const Node& half = g.node(mul6);
    const bool halfOk = (constantEquals(g, half.inputs[0], 0.5) && half.inputs[1] == x) || (constantEquals(g, half.inputs[1], 0.5) && half.inputs[0] == x);
    if (!halfOk) return refuseAt(mul6, "the other factor is not 0.5 · x of the same x");
    // mul6 may have other readers (CheckNode without single): it stays then.
    if (outputEdges(g, mul6) == 1) group.push_back(mul6);
    group.insert(group.end(), {tanhNode, add2, mul5});
    useMicrosoftDomain(rw);
    const std::string where = q(g, anchor);
    NodeId fused = rw.replaceNodes(group, "FastGelu", {x}, {g.node(mul5).outputs[0]}, {}, "FastGeluFusion: tanh-approximated GELU", "GPT2Gelu", kMSDomain);
    rw.applied({fused}, "FastGeluFusion: " + std::to_string(group.size()) + " nodes from " + where + " fused into com.microsoft FastGelu");
    return true;
}

}  // namespace

std::vector<RewriteRule> fastGeluFusion() {
    return {{"FastGeluFusion", {"Mul", "Pow"}, "", fuseFastGelu}};
}

}  // namespace passlens::passes::ort
