// x·Sigmoid(k·x): SiLU/Swish (k = 1) and QuickGELU (k = 1.702). No standard ONNX op computes it in
// the opsets this build knows (≤ 17), so each occurrence is marked with a missed remark and kept.
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

std::vector<ActivationForm> findSiluForms(const Graph& g) {
    std::vector<ActivationForm> found;
    for (NodeId id : g.nodeOrder()) {
        const Node& sig = g.node(id);
        if (!isOp(sig, "Sigmoid")) continue;
        // The sigmoid's argument: x itself, or k·x.
        ValueId arg = sig.inputs[0], x = arg;
        double k = 1.0;
        std::vector<NodeId> nodes;
        if (NodeId scale = producerOf(g, arg, "Mul"); scale != kNone && g.node(scale).inputs.size() == 2) {
            for (size_t i = 0; i < 2; ++i)
                if (auto c = scalarOf(g, g.node(scale).inputs[i]); c && !constantOf(g, g.node(scale).inputs[1 - i])) {
                    k = *c;
                    x = g.node(scale).inputs[1 - i];
                    nodes.push_back(scale);
                }
        }
        nodes.push_back(id);
        NodeId mul = kNone;
        for (NodeId c : g.value(sig.outputs[0]).consumers)
            if (isOp(g.node(c), "Mul") && otherInput(g.node(c), sig.outputs[0]) == x) mul = c;
        if (mul == kNone) continue;
        nodes.push_back(mul);
        const bool silu = near(k, 1.0), quick = near(k, 1.702, 1e-3);
        found.push_back({nodes, x, g.node(mul).outputs[0], mul,
                         silu ? "SiLU x·Sigmoid(x)" : quick ? "QuickGELU x·Sigmoid(1.702·x)" : "x·Sigmoid(k·x)",
                         silu ? "Silu" : quick ? "QuickGelu" : "SiluScaled"});
    }
    return found;
}

void FuseSilu::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("silu");
        for (const ActivationForm& f : findSiluForms(g))
            rw.missed(f.nodes, f.form + " at " + g.node(f.anchor).displayName() +
                                   ": no standard ONNX op computes it up to opset 17; left as is");
    });
}

std::unique_ptr<Pass> makeFuseSiluPass() { return std::make_unique<FuseSilu>(); }

}  // namespace passlens::passes
