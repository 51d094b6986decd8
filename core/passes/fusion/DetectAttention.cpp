// Scaled dot-product attention detection: MatMul(Q, Kᵀ) → [scale] → [mask] → Softmax → MatMul(·, V).
// An analysis: it marks each occurrence with an applied remark listing its nodes and rewrites
// nothing (no standard ONNX op before opset 23 computes attention).
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

void DetectAttention::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule("attention");
        for (NodeId smId : g.nodeOrder()) {
            const Node& sm = g.node(smId);
            if (!isOp(sm, "Softmax")) continue;
            // ·V: a MatMul reading the probabilities as its left operand.
            NodeId pv = kNone;
            for (NodeId c : g.value(sm.outputs[0]).consumers)
                if (isOp(g.node(c), "MatMul") && g.node(c).inputs[0] == sm.outputs[0]) pv = c;
            if (pv == kNone) continue;
            // Walk back from the Softmax input over an optional mask Add and an optional scale.
            std::vector<NodeId> nodes;
            std::string parts;
            ValueId v = sm.inputs[0];
            NodeId p = g.value(v).producer;
            if (p != kNone && isOp(g.node(p), "Add") && g.node(p).inputs.size() == 2) {
                nodes.push_back(p);
                parts += ", mask " + g.node(p).displayName();
                // The scores are the Add operand that a MatMul or a scale produces.
                ValueId a = g.node(p).inputs[0], b = g.node(p).inputs[1];
                NodeId pa = g.value(a).producer;
                v = pa != kNone && (isOp(g.node(pa), "MatMul") || isOp(g.node(pa), "Mul") || isOp(g.node(pa), "Div")) ? a : b;
                p = g.value(v).producer;
            }
            if (p != kNone && (isOp(g.node(p), "Mul") || isOp(g.node(p), "Div")) && g.node(p).inputs.size() == 2 &&
                scalarOf(g, g.node(p).inputs[1])) {
                nodes.push_back(p);
                parts += ", scale " + g.node(p).displayName();
                v = g.node(p).inputs[0];
                p = g.value(v).producer;
            }
            if (p == kNone || !isOp(g.node(p), "MatMul")) continue;
            const NodeId qk = p;
            std::string qkText = "Q·Kᵀ " + g.node(qk).displayName();
            std::vector<std::string> extras;
            for (size_t side = 0; side < 2; ++side) {
                NodeId q = g.value(g.node(qk).inputs[side]).producer;
                if (q == kNone) continue;
                const Node& qn = g.node(q);
                if (side == 1 && isOp(qn, "Transpose")) {
                    nodes.push_back(q);
                    qkText += " (Kᵀ by " + qn.displayName() + ")";
                } else if (side == 0 && (isOp(qn, "Mul") || isOp(qn, "Div")) && qn.inputs.size() == 2 && scalarOf(g, qn.inputs[1])) {
                    nodes.push_back(q);
                    qkText += " (Q scaled by " + qn.displayName() + ")";
                }
            }
            nodes.insert(nodes.begin(), qk);
            nodes.push_back(smId);
            nodes.push_back(pv);
            rw.applied(nodes, "attention at " + sm.displayName() + ": " + qkText + parts + ", " + sm.displayName() + ", ·V " +
                                  g.node(pv).displayName());
        }
    });
}

}  // namespace passlens::passes
