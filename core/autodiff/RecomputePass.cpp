// The `recompute` pass: one pipeline step that applies a recomputation strategy to a training
// graph, so the stepper shows the copies as "added" with "came from: <forward node>".
#include "autodiff/Recompute.h"
#include "ir/Error.h"
#include "passes/Pass.h"
#include "passes/PassRegistry.h"

namespace passlens::autodiff {

using namespace passlens::passes;

namespace {

class RecomputePass final : public Pass {
public:
    std::string name() const override { return "recompute"; }
    std::string description() const override {
        return "Recomputes saved activations in the backward pass (gradient checkpointing: none | sqrt | all | mincut | budget=BYTES)";
    }
    std::vector<PassOption> options() const override {
        return {{"strategy", PassOption::Type::Text, {}, "sqrt", "none | sqrt | all | mincut | budget=BYTES (as --recompute)",
                 [](PassOptions& o, const std::string& v) {
                     parseRecomputeOptions(v);  // BadInput for a strategy it does not know
                     o.params["recompute.strategy"] = v;
                 }}};
    }

protected:
    void runImpl(PassContext& ctx) const override {
        const auto& params = ctx.options().params;
        auto it = params.find("recompute.strategy");
        const RecomputeOptions o = parseRecomputeOptions(it == params.end() ? "sqrt" : it->second);
        Rewriter& rw = ctx.rewriter();
        rw.setRule("recompute-" + o.text());
        RecomputeResult r = applyRecompute(rw, o);
        if (!r.feasible) throwBadInput(r.message);
        for (const auto& k : r.keptByRule) rw.missed({}, "kept '" + k.value + "' (rule " + k.rule + "): " + k.detail);
        if (r.addedNodes.empty()) rw.missed({}, r.message);
        else rw.applied(r.addedNodes, r.message);
        rw.setRule({});
    }
};

}  // namespace

std::unique_ptr<Pass> makeRecomputePass() { return std::make_unique<RecomputePass>(); }

}  // namespace passlens::autodiff
