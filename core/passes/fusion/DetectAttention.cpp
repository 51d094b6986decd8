// Scaled dot-product attention: MatMul(Q, Kᵀ) → [scale] → [mask] → Softmax → MatMul(·, V).
// findAttentionForms is the matcher; detect-attention marks each occurrence with an applied remark
// listing its nodes and rewrites nothing (no standard ONNX op before opset 23 computes attention);
// group-attention (GroupAttention.cpp) turns each into one function call.
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

bool isScalarScale(const Graph& g, const Node& n) {
    return (isOp(n, "Mul") || isOp(n, "Div")) && n.inputs.size() == 2 && scalarOf(g, n.inputs[1]).has_value();
}

}  // namespace

std::vector<AttentionForm> findAttentionForms(const Graph& g) {
    std::vector<AttentionForm> forms;
    for (NodeId smId : g.nodeOrder()) {
        const Node& sm = g.node(smId);
        if (!isOp(sm, "Softmax")) continue;
        // ·V: a MatMul reading the probabilities as its left operand.
        NodeId pv = kNone;
        for (NodeId c : g.value(sm.outputs[0]).consumers)
            if (isOp(g.node(c), "MatMul") && g.node(c).inputs[0] == sm.outputs[0]) pv = c;
        if (pv == kNone) continue;
        AttentionForm form;
        form.softmax = smId;
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
            form.mask = v == a ? b : a;
            p = g.value(v).producer;
        }
        if (p != kNone && isScalarScale(g, g.node(p))) {
            nodes.push_back(p);
            parts += ", scale " + g.node(p).displayName();
            v = g.node(p).inputs[0];
            p = g.value(v).producer;
        }
        if (p == kNone || !isOp(g.node(p), "MatMul")) {
            form.blocker = p;
            form.why = "the scores reaching " + sm.displayName() + " come from " +
                       (p == kNone ? "'" + g.value(v).name + "' (no producer)" : g.node(p).displayName() + " (" + g.node(p).opType + ")") +
                       ", not a Q·Kᵀ MatMul";
            form.nodes = {smId, pv};
            forms.push_back(std::move(form));
            continue;
        }
        const NodeId qk = p;
        std::string qkText = "Q·Kᵀ " + g.node(qk).displayName();
        form.q = g.node(qk).inputs[0];
        form.k = g.node(qk).inputs[1];
        for (size_t side = 0; side < 2; ++side) {
            NodeId q = g.value(g.node(qk).inputs[side]).producer;
            if (q == kNone) continue;
            const Node& qn = g.node(q);
            if (side == 1 && isOp(qn, "Transpose")) {
                nodes.push_back(q);
                qkText += " (Kᵀ by " + qn.displayName() + ")";
                form.k = qn.inputs[0];
            } else if (side == 0 && isScalarScale(g, qn)) {
                nodes.push_back(q);
                qkText += " (Q scaled by " + qn.displayName() + ")";
                form.q = qn.inputs[0];
            }
        }
        nodes.insert(nodes.begin(), qk);
        nodes.push_back(smId);
        nodes.push_back(pv);
        form.v = g.node(pv).inputs[1];
        form.out = g.node(pv).outputs[0];
        form.nodes = nodes;
        form.text = "attention at " + sm.displayName() + ": " + qkText + parts + ", " + sm.displayName() + ", ·V " +
                    g.node(pv).displayName();
        forms.push_back(std::move(form));
    }
    return forms;
}

void DetectAttention::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        rw.setRule("attention");
        for (const AttentionForm& form : findAttentionForms(rw.graph()))
            if (form.matched()) rw.applied(form.nodes, form.text);
    });
}

std::unique_ptr<Pass> makeDetectAttentionPass() { return std::make_unique<DetectAttention>(); }

}  // namespace passlens::passes
