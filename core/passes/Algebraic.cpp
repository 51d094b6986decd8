// Algebraic simplification: drives the rule catalog of core/passes/algebraic over every graph
// (subgraphs included). Each node is offered to the neutral-element rules, then the shape rules,
// then the arithmetic rules; a node a rule creates is simplified again right away, so a second
// run of the pass finds nothing left to do.
#include "onnx/SchemaValidation.h"
#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"
#include "passes/algebraic/Rules.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

class AlgebraicPass final : public Pass {
public:
    std::string name() const override { return "algebraic"; }
    bool preservesValueTypes() const override { return true; }
    std::string description() const override {
        return "Removes no-op arithmetic and identity-like nodes (x+0, x*1, Identity, Dropout, Reshape chains, ...)";
    }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) {
            const std::vector<NodeId> order = rw.graph().nodeOrder();
            for (NodeId id : order) simplifyWithRevisits(rw, id);
            rw.setRule({});
        });
    }

private:
    static void simplifyWithRevisits(Rewriter& rw, NodeId first) {
        algebraic::Revisit work{first};
        for (int budget = 16; !work.empty() && budget > 0; --budget) {
            const NodeId id = work.back();
            work.pop_back();
            if (rw.graph().hasNode(id)) simplify(rw, id, work);
        }
    }

    static void simplify(Rewriter& rw, NodeId id, algebraic::Revisit& revisit) {
        const Node& n = rw.graph().node(id);
        if (!n.domain.empty() && n.domain != "ai.onnx") return;
        if (n.inputs.empty() || n.inputs[0] == kNone || n.outputs.empty() || n.outputs[0] == kNone) return;
        if (!onnxio::fitsSchemaEnvelope(n)) return;  // the rules read what the op's schema promises
        if (algebraic::simplifyNeutral(rw, id, revisit)) return;
        if (algebraic::mergeReluClip(rw, id, revisit)) return;
        if (algebraic::dropZeroInitialStates(rw, id, revisit)) return;
        if (algebraic::mergeNestedWheres(rw, id, revisit)) return;
        if (algebraic::unsqueezedDimToShapeSlice(rw, id, revisit)) return;
        if (algebraic::elementwiseThroughSqueeze(rw, id, revisit)) return;
        if (algebraic::mergeUnsqueezes(rw, id, revisit)) return;
        if (algebraic::sinkUnsqueezeThroughElementwise(rw, id, revisit)) return;
        if (algebraic::vectorizeLanesOfReader(rw, id, revisit)) return;
        if (algebraic::unsqueezeIntoGather(rw, id, revisit)) return;
        if (algebraic::sinkReshapeToUnsqueeze(rw, id, revisit)) return;
        if (algebraic::mergeSlices(rw, id, revisit)) return;
        if (algebraic::mergeViews(rw, id, revisit)) return;
        if (algebraic::concatOfScaledSplit(rw, id, revisit)) return;
        if (algebraic::gatherOfFill(rw, id, revisit)) return;
        if (algebraic::vectorizeScalarLanes(rw, id, revisit)) return;
        if (algebraic::viewTransposeReshape(rw, id, revisit)) return;
        if (algebraic::simplifyShapeOps(rw, id, revisit)) return;
        algebraic::simplifyArithmetic(rw, id, revisit);
    }
};

}  // namespace

std::unique_ptr<Pass> makeAlgebraicPass() { return std::make_unique<AlgebraicPass>(); }

}  // namespace passlens::passes
