// PReLU from its Relu forms:
//   Relu(x) − α·Relu(−x)  → PRelu(x, α)       Relu(x) + β·Relu(−x) → PRelu(x, −β)
// α must be a float32 constant that broadcasts unidirectionally to x (PRelu's rule), and every
// intermediate must be read only inside the pattern.
#include <set>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

void FusePRelu::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("prelu");
        for (NodeId id : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(id)) continue;
            const Node& top = g.node(id);
            const bool isSub = isOp(top, "Sub");
            if ((!isSub && !isOp(top, "Add")) || top.inputs.size() != 2) continue;
            // One operand Relu(x), the other Mul(α, Relu(Neg(x))).
            for (size_t side = 0; side < 2; ++side) {
                if (isSub && side == 1) break;  // Relu(x) must be the minuend
                NodeId pos = producerOf(g, top.inputs[side], "Relu");
                NodeId mul = producerOf(g, top.inputs[1 - side], "Mul");
                if (pos == kNone || mul == kNone) continue;
                ValueId x = g.node(pos).inputs[0];
                NodeId neg = kNone, reluNeg = kNone;
                ValueId alpha = kNone;
                for (size_t m = 0; m < 2 && reluNeg == kNone; ++m) {
                    NodeId r = producerOf(g, g.node(mul).inputs[m], "Relu");
                    if (r == kNone) continue;
                    NodeId n = producerOf(g, g.node(r).inputs[0], "Neg");
                    if (n == kNone || g.node(n).inputs[0] != x) continue;
                    reluNeg = r;
                    neg = n;
                    alpha = g.node(mul).inputs[1 - m];
                }
                if (reluNeg == kNone) continue;
                std::vector<NodeId> group{pos, neg, reluNeg, mul, id};
                const std::string where = "PReLU form at " + top.displayName();
                auto slope = floatValues(g, alpha);
                if (!slope || constantOf(g, alpha)->dtype != DataType::Float) {
                    rw.missed(group, where + " not fused: the slope '" + g.value(alpha).name + "' is not a float32 constant", {alpha});
                    break;
                }
                // Unidirectional broadcast of α to x.
                const auto& aDims = constantOf(g, alpha)->dims;
                const auto& xType = g.value(x).type;
                bool fits = xType.shape && aDims.size() <= xType.shape->rank();
                for (size_t i = 0; fits && i < aDims.size(); ++i) {
                    const Dim& d = xType.shape->dims[xType.shape->rank() - aDims.size() + i];
                    fits = aDims[i] == 1 || (d.isStatic() && *d.value == aDims[i]);
                }
                if (!fits) {
                    rw.missed(group, where + " not fused: the slope of shape " + Attribute::makeInts("", aDims).valueToString() +
                                         " does not broadcast to x (" + xType.toString() + ")", {alpha});
                    break;
                }
                std::string blocked;
                ValueId blockedValue = kNone;
                for (NodeId n : group) {
                    if (n == id) continue;
                    ValueId v = g.node(n).outputs[0];
                    if (readOutside(g, v, group) && blocked.empty()) {
                        blocked = "'" + g.value(v).name + "' has " + std::to_string(readerCount(g, v)) + " readers (" + readersOf(g, v) + ")";
                        blockedValue = v;
                    }
                }
                if (!blocked.empty()) {
                    rw.missed(group, where + " not fused: " + blocked, {blockedValue});
                    break;
                }
                const ValueId topOut = top.outputs[0];  // top is not read after the first edit
                const std::string nameHint = top.displayName() + ".prelu";
                ValueId slopeValue = alpha;
                if (!isSub) {
                    std::vector<float> negated;
                    for (double s : *slope) negated.push_back(float(-s));
                    slopeValue = rw.newInitializer(g.value(alpha).name + "_negated", makeTensorOf(DataType::Float, aDims, negated));
                }
                NodeId fused = rw.replaceNodes(group, "PRelu", {x, slopeValue}, {topOut}, {},
                                               where + ": Relu(x) and a scaled Relu(−x) are PRelu(x, α)", nameHint);
                rw.applied({fused}, where + ": 5 nodes fused into PRelu");
                removeUnreadConstants(rw, {alpha}, "PReLU fusion");
                break;
            }
        }
    });
}

std::unique_ptr<Pass> makeFusePReluPass() { return std::make_unique<FusePRelu>(); }

}  // namespace passlens::passes
