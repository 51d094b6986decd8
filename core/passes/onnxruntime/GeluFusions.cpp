// ONNX Runtime's GeluFusion (gelu_fusion.cc; Level1 into ONNX Gelu from opset 20, Level2 into
// com.microsoft Gelu), BiasGeluFusion (bias_gelu_fusion.cc) and QuickGeluFusion (quick_gelu_fusion.cc).
//   GeluFusion:  Div(x, √2) → Erf → Add(1) → Mul with Mul(x, 0.5), or Mul(x, ·) → Mul(0.5)
//   BiasGelu:    Add(x, bias[N]) → Gelu → BiasGelu(x, bias)
//   QuickGelu:   x · Sigmoid(x) or x · Sigmoid(α·x) → QuickGelu(x, alpha=α)
#include <cmath>

#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

const std::vector<DataType> kGeluTypes{DataType::Float16, DataType::Float, DataType::Double};

bool fuseGelu(Rewriter& rw, NodeId divId, bool level1, int64_t opset) {
    const Graph& g = rw.graph();
    const Node& div = g.node(divId);
    if (div.inputs.size() != 2 || !constantEquals(g, div.inputs[1], M_SQRT2)) return false;  // not a GELU's x/√2
    const std::string rule = level1 ? "GeluFusion (basic)" : "GeluFusion";
    auto refuse = [&](const std::vector<NodeId>& at, const std::string& why, std::vector<ValueId> edges = {}) {
        ort::refuse(rw, at, rule + ": not applied at " + q(g, divId) + ": " + why, std::move(edges));
        return false;
    };
    if (outputEdges(g, divId) != 1) return refuse({divId}, "the Div output is " + readBy(g, divId) + ", ONNX Runtime needs 1", {div.outputs[0]});
    if (!inputsTypedIn(g, divId, kGeluTypes)) return refuse({divId}, "Gelu takes float16, float or double");
    NodeId erf = soleReader(g, divId, "Erf");
    if (erf == kNone) return false;  // x/√2 feeding something else is not a GELU
    if (outputEdges(g, erf) != 1) return refuse({erf}, "the Erf output is " + readBy(g, erf) + ", ONNX Runtime needs 1", {g.node(erf).outputs[0]});
    NodeId add = soleReader(g, erf, "Add");
    if (add == kNone) return refuse({erf}, "the Erf is not read by an Add", {g.node(erf).outputs[0]});
    if (outputEdges(g, add) != 1) return refuse({add}, "the Add output is " + readBy(g, add) + ", ONNX Runtime needs 1", {g.node(add).outputs[0]});
    ValueId one = g.node(add).inputs[0] == g.node(erf).outputs[0] ? g.node(add).inputs[1] : g.node(add).inputs[0];
    if (!constantEquals(g, one, 1.0)) return refuse({add}, "the Add's other input " + qv(g, one) + " is not the constant 1", {one});
    NodeId mul = soleReader(g, add, "Mul");
    if (mul == kNone) return refuse({add}, "the Add is not read by a Mul", {g.node(add).outputs[0]});
    const ValueId x = div.inputs[0];
    ValueId other = g.node(mul).inputs[0] == g.node(add).outputs[0] ? g.node(mul).inputs[1] : g.node(mul).inputs[0];
    std::vector<NodeId> group{divId, erf, add};
    ValueId out;
    if (NodeId mul2 = producer(g, other, "Mul"); mul2 != kNone) {
        // Form 1: Mul(Mul(x, 0.5), 1 + erf)
        if (outputEdges(g, mul2) != 1) return refuse({mul2}, "the Mul(x, 0.5) output is " + readBy(g, mul2) + ", ONNX Runtime needs 1", {other});
        ValueId half = g.node(mul2).inputs[0] == x ? g.node(mul2).inputs[1] : g.node(mul2).inputs[0];
        if ((g.node(mul2).inputs[0] != x && g.node(mul2).inputs[1] != x) || !constantEquals(g, half, 0.5))
            return refuse({mul2}, q(g, mul2) + " is not x · 0.5 (its inputs are not the Div's input and the constant 0.5)", {half});
        group.push_back(mul2);
        group.push_back(mul);
        out = g.node(mul).outputs[0];
    } else if (other == x) {
        // Form 2: Mul(Mul(x, 1 + erf), 0.5)
        if (outputEdges(g, mul) != 1) return refuse({mul}, "the Mul output is " + readBy(g, mul) + ", ONNX Runtime needs 1", {g.node(mul).outputs[0]});
        NodeId mulHalf = soleReader(g, mul, "Mul");
        if (mulHalf == kNone) return refuse({mul}, "x · (1 + erf) is not read by a Mul by 0.5", {g.node(mul).outputs[0]});
        ValueId half = g.node(mulHalf).inputs[0] == g.node(mul).outputs[0] ? g.node(mulHalf).inputs[1] : g.node(mulHalf).inputs[0];
        if (!constantEquals(g, half, 0.5)) return refuse({mulHalf}, "the last Mul's other input " + qv(g, half) + " is not 0.5", {half});
        group.push_back(mul);
        group.push_back(mulHalf);
        out = g.node(mulHalf).outputs[0];
    } else {
        return refuse({mul}, "the Mul's other input " + qv(g, other) + " is neither x nor Mul(x, 0.5)", {other});
    }
    if (level1 && opset < 20)
        return refuse(group, "the model's opset is " + std::to_string(opset) +
                                 ", the basic level fuses only into ONNX Gelu (opset 20); the extended level fuses into com.microsoft Gelu");
    if (!level1) useMicrosoftDomain(rw);
    const std::string divName = q(g, divId);
    NodeId gelu = rw.replaceNodes(group, "Gelu", {x}, {out}, {}, rule + ": x·½·(1 + erf(x/√2)) is Gelu", "Gelu",
                                  level1 ? "" : kMSDomain);
    rw.applied({gelu}, rule + ": " + std::to_string(group.size()) + " nodes from " + divName + " fused into " +
                           (level1 ? "Gelu" : "com.microsoft Gelu"));
    return true;
}

bool fuseBiasGelu(Rewriter& rw, NodeId addId) {
    const Graph& g = rw.graph();
    const Node& add = g.node(addId);
    auto readers = outputNodes(g, addId);
    if (readers.size() != 1 || g.node(readers[0]).opType != "Gelu" || g.node(readers[0]).domain != kMSDomain) return false;
    NodeId gelu = readers[0];
    auto refuse = [&](const std::string& why, std::vector<ValueId> edges = {}) {
        ort::refuse(rw, {addId, gelu}, "BiasGeluFusion: not applied at " + q(g, addId) + " + " + q(g, gelu) + ": " + why, std::move(edges));
        return false;
    };
    if (producesGraphOutput(g, addId)) return refuse("the Add output is a graph output", {add.outputs[0]});
    // The bias: a 1-D input whose length is the other input's last dim.
    for (size_t side : {size_t(1), size_t(0)}) {
        ValueId bias = add.inputs[side], x = add.inputs[1 - side];
        auto sb = shapeOf(g, bias), sx = shapeOf(g, x);
        if (!sb || !sx || sb->rank() != 1 || sx->rank() < 1 || !sb->dims[0].value || sb->dims[0] != sx->dims.back()) continue;
        NodeId fused = rw.replaceNodes({addId, gelu}, "BiasGelu", {x, bias}, {g.node(gelu).outputs[0]}, {},
                                       "BiasGeluFusion: Add of a bias before Gelu", "BiasGelu", kMSDomain);
        rw.applied({fused}, "BiasGeluFusion: " + q(g, fused) + " from an Add and a Gelu");
        return true;
    }
    return refuse("neither Add input is 1-D with the other input's last dim (the bias shape BiasGelu takes)");
}

bool fuseQuickGelu(Rewriter& rw, NodeId anchor) {
    const Graph& g = rw.graph();
    std::vector<NodeId> group;
    ValueId x = kNone;
    float alpha = 1.0f;
    NodeId sig = anchor;
    if (isOp(g, anchor, "Mul")) {
        // Mul(x, α) → Sigmoid → Mul(x, ·)
        const Node& m = g.node(anchor);
        if (outputEdges(g, anchor) != 1 || producesGraphOutput(g, anchor) || m.inputs.size() != 2) return false;
        int alphaIndex = -1;
        for (int i = 0; i < 2 && alphaIndex < 0; ++i) {
            if (!isScalarShape(g, m.inputs[size_t(i)])) continue;
            const TensorPtr t = match::constantOf(g, m.inputs[size_t(i)]);
            if (!t || (t->dtype != DataType::Float && t->dtype != DataType::Double && t->dtype != DataType::Float16)) continue;
            alpha = float(*constantScalar(g, m.inputs[size_t(i)]));
            alphaIndex = i;
        }
        if (alphaIndex < 0) return false;
        x = m.inputs[size_t(1 - alphaIndex)];
        group.push_back(anchor);
        sig = outputNodes(g, anchor)[0];
        if (!isOp(g, sig, "Sigmoid")) return false;
    } else {
        x = g.node(anchor).inputs[0];
    }
    if (outputEdges(g, sig) != 1 || producesGraphOutput(g, sig)) {
        // A Sigmoid with several readers is a plain Sigmoid unless one of them is x · sigmoid.
        for (NodeId r : outputNodes(g, sig))
            if (isOp(g, r, "Mul") && (g.node(r).inputs[0] == x || g.node(r).inputs[1] == x))
                refuse(rw, {sig, r}, "QuickGeluFusion: not applied at " + q(g, sig) + ": its output is " + readBy(g, sig) +
                                        (producesGraphOutput(g, sig) ? " and a graph output" : "") + ", ONNX Runtime needs 1",
                          {g.node(sig).outputs[0]});
        return false;
    }
    group.push_back(sig);
    NodeId mul = outputNodes(g, sig)[0];
    if (!isOp(g, mul, "Mul")) return false;
    const Node& mn = g.node(mul);
    ValueId other = mn.inputs[0] == g.node(sig).outputs[0] ? mn.inputs[1] : mn.inputs[0];
    if (other != x) return false;  // Sigmoid(a)·b: a gate, not x·sigmoid(x)
    group.push_back(mul);
    useMicrosoftDomain(rw);
    NodeId fused = rw.replaceNodes(group, "QuickGelu", {x}, {mn.outputs[0]}, {Attribute::makeFloat("alpha", alpha)},
                                   "QuickGeluFusion: x·sigmoid(αx)", "QuickGelu", kMSDomain);
    rw.applied({fused}, "QuickGeluFusion: " + q(g, fused) + " (alpha " + Attribute::makeFloat("alpha", alpha).valueToString() + ")");
    return true;
}

}  // namespace

std::vector<RewriteRule> geluFusion(bool level1, int64_t opset) {
    return {{level1 ? "GeluFusion (basic)" : "GeluFusion", {"Div"}, "",
             [level1, opset](Rewriter& rw, NodeId n) { return fuseGelu(rw, n, level1, opset); }}};
}

std::vector<RewriteRule> biasGeluFusion() { return {{"BiasGeluFusion", {"Add"}, "", fuseBiasGelu}}; }

std::vector<RewriteRule> quickGeluFusion() { return {{"QuickGeluFusion", {"Mul", "Sigmoid"}, "", fuseQuickGelu}}; }

}  // namespace passlens::passes::ort
