#pragma once
// Recomputation (gradient checkpointing) on a training graph: forward activations the backward
// pass reads are dropped after the forward pass and recomputed, from kept tensors (checkpoints,
// inputs, parameters), by copies of their forward nodes placed just before their first backward
// reader. Strategies:
//   none           nothing is recomputed (the figures are still reported)
//   sqrt           Chen et al. (2016): the saved activations that alone cross a cut of the forward
//                  schedule (a chain's layers; a DAG's articulation points) are split into segments
//                  of about √n; each segment's last one is a checkpoint, the rest is recomputed
//   all            every saved activation no rule keeps is recomputed (the floor of this approach)
//   budget=BYTES   greedy: drop the activations cheapest to recompute (FLOPs per byte) until the
//                  planned arena fits BYTES; infeasible budgets are an error naming the lowest arena
// Rules that keep a tensor: random ops are never recomputed (analysis::isNondeterministic), nor
// control flow; MatMul/Gemm/Conv/ConvTranspose ("heavy") are not recomputed under `budget` by
// default (as PyTorch's min-cut partitioner bans them) but are under `sqrt` and `all` (Chen's
// segments recompute whole layers: about one extra forward pass); ":heavy" / ":no-heavy" after the
// strategy overrides either default.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::passes {
class Rewriter;
class Pass;
class PassRegistry;
}

namespace passlens::autodiff {

struct RecomputeOptions {
    enum class Strategy { None, Sqrt, All, Budget };
    Strategy strategy = Strategy::None;
    int64_t budgetBytes = 0;
    std::optional<bool> heavy;  ///< recompute MatMul/Gemm/Conv; unset = the strategy's default
    bool allowsHeavy() const { return heavy.value_or(strategy == Strategy::Sqrt || strategy == Strategy::All); }
    std::string text() const;   ///< "sqrt", "budget=4096:heavy", ...
};

/// Parses `none`, `sqrt`, `all`, `budget=BYTES` (K/M/G suffixes allowed), each optionally followed by
/// `:heavy` or `:no-heavy`. Throws Error(BadInput) with the accepted forms otherwise.
RecomputeOptions parseRecomputeOptions(const std::string& text);

/// A saved activation the strategy could not drop, and the rule that kept it.
struct KeptTensor {
    std::string value;
    std::string rule;    ///< nondeterministic | heavy-op | control-flow
    std::string detail;  ///< "recomputing it needs MatMul 'fc3'"
};

struct RecomputeResult {
    std::string strategy;
    std::vector<std::string> savedActivations;  ///< forward tensors the backward pass reads (before)
    std::vector<std::string> checkpoints;       ///< kept on purpose (sqrt's segment ends)
    std::vector<KeptTensor> keptByRule;
    std::vector<std::string> dropped;           ///< recomputed in the backward pass
    std::vector<ir::NodeId> addedNodes;         ///< the recomputed copies
    double forwardFlops = 0;                    ///< one forward pass (op cost model)
    double extraFlops = 0;                      ///< the copies
    int64_t peakBefore = 0, peakAfter = 0;      ///< planned arena ("best" planner, model order)
    bool feasible = true;
    std::string message;                        ///< one line: what was done, or why the budget is infeasible
};

/// Applies `options` to the rewriter's training graph (a graph with backward nodes; others get a
/// result saying so and no change). An infeasible budget changes nothing: feasible = false.
RecomputeResult applyRecompute(passes::Rewriter& rw, const RecomputeOptions& options);

/// The same on a model outside a pass pipeline (CLI, app, tests). With `throwIfInfeasible` false an
/// infeasible budget leaves the model unchanged and returns feasible = false.
RecomputeResult recomputeModel(ir::Model& m, const RecomputeOptions& options, bool throwIfInfeasible = true);

/// The `recompute` pass (Level None: on request). Param recompute.strategy (default sqrt) takes
/// parseRecomputeOptions' forms; an infeasible budget is Error(BadInput).
std::unique_ptr<passes::Pass> makeRecomputePass();
void registerRecomputePass(passes::PassRegistry& reg);

/// Planned arena of a graph as the recompute strategies measure it ("best" planner, model order).
int64_t plannedPeak(const ir::Model& m);

}  // namespace passlens::autodiff
