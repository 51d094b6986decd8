// Softplus from its decomposed form: Log(Exp(x) + 1) → Softplus(x) (ONNX Softplus, every opset).
// The 1 must be a one-element constant that cannot broadcast x to a higher rank, and Exp's and
// Add's outputs must be read only inside the pattern.
#include "passes/Pass.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

class FuseSoftplus final : public Pass {
public:
    std::string name() const override { return "fuse-softplus"; }
    std::string description() const override { return "Fuses Log(Exp(x) + 1) into Softplus"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) {
            const Graph& g = rw.graph();
            rw.setRule("softplus");
            for (NodeId log : std::vector<NodeId>(g.nodeOrder())) {
                if (!g.hasNode(log) || !isOp(g.node(log), "Log")) continue;
                const NodeId add = producerOf(g, g.node(log).inputs[0], "Add");
                if (add == kNone || g.node(add).inputs.size() != 2) continue;
                NodeId exp = kNone;
                ValueId one = kNone;
                for (size_t side = 0; side < 2 && exp == kNone; ++side) {
                    exp = producerOf(g, g.node(add).inputs[side], "Exp");
                    one = g.node(add).inputs[1 - side];
                }
                if (exp == kNone || scalarOf(g, one) != 1.0) continue;
                fuse(rw, {exp, add, log}, one);
            }
        });
    }

private:
    static void fuse(Rewriter& rw, const std::vector<NodeId>& group, ValueId one) {
        const Graph& g = rw.graph();
        const Node& log = g.node(group[2]);
        const ValueId x = g.node(group[0]).inputs[0];
        const std::string where = "Softplus form at " + log.displayName();
        const auto& xShape = g.value(x).type.shape;
        if (!xShape || constantOf(g, one)->dims.size() > xShape->rank()) {
            rw.missed(group, where + " not fused: the constant 1 could raise the rank of x (" + g.value(x).type.toString() + ")", {one});
            return;
        }
        for (NodeId n : {group[0], group[1]}) {
            const ValueId v = g.node(n).outputs[0];
            if (!readOutside(g, v, group)) continue;
            rw.missed(group, where + " not fused: '" + g.value(v).name + "' has " + std::to_string(readerCount(g, v)) +
                                 " readers (" + readersOf(g, v) + ")", {v});
            return;
        }
        const std::string name = log.displayName() + ".softplus";
        const NodeId fused = rw.replaceNodes(group, "Softplus", {x}, {log.outputs[0]}, {},
                                             where + ": Log(Exp(x) + 1) is Softplus(x)", name);
        rw.applied({fused}, where + ": 3 nodes fused into Softplus");
        removeUnreadConstants(rw, {one}, "Softplus fusion");
    }
};

}  // namespace

std::unique_ptr<Pass> makeFuseSoftplusPass() { return std::make_unique<FuseSoftplus>(); }

}  // namespace passlens::passes
