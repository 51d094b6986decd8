#pragma once
// Recomputation (gradient checkpointing) on a training graph: forward activations the backward
// pass reads are dropped after the forward pass and recomputed, from kept tensors (checkpoints,
// inputs, parameters), by copies of their forward nodes placed just before their first backward
// reader. Every choice is measured by planning the rewritten training graph ("best" planner, model
// order): the arena the planner reaches, never an estimate. Strategies:
//   none           nothing is recomputed (the figures are still reported)
//   sqrt           Chen et al. (2016): the saved activations that alone cross a cut of the forward
//                  schedule (a chain's layers; a DAG's articulation points) are split into segments
//                  of about √n; each segment's last one is a checkpoint, the rest is recomputed
//   all            every saved activation no rule keeps is recomputed (the floor of this approach)
//   mincut         as PyTorch's min-cut partitioner: keep the forward values with the fewest bytes
//                  such that everything the backward pass reads is kept or recomputable from them
//                  (a maximum flow; capacities = bytes; heavy ops banned by default)
//   budget=BYTES   fewest extra FLOPs whose planned arena fits BYTES: seeds (√n, Chen's
//                  segmentations, all, the min cuts, cheapest-first prefixes, a greedy that drops
//                  what is live at the planned peak) are planned, and the fitting ones trimmed
//                  (activations kept again, most expensive first, while the arena still fits); so
//                  it is never worse than sqrt or all at their own arena. Infeasible budgets name
//                  the lowest arena reached
//   pareto         changes nothing; recomputeCurve() lists every choice planned and the curve of
//                  the non-dominated ones (arena vs extra FLOPs), with store-all, √n and all marked
// Rules that keep a tensor: random ops are never recomputed (analysis::isNondeterministic), nor
// control flow; MatMul/Gemm/Conv/ConvTranspose ("heavy") are not recomputed under `mincut` by
// default (as PyTorch's partitioner bans them) but are under the others, where FLOPs decide;
// ":heavy" / ":no-heavy" after the strategy overrides either default.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/Model.h"

namespace passlens::passes {
class Rewriter;
class Pass;
class PassRegistry;
}

namespace passlens::autodiff {

struct RecomputeOptions {
    enum class Strategy { None, Sqrt, All, MinCut, Budget, Pareto };
    Strategy strategy = Strategy::None;
    int64_t budgetBytes = 0;
    std::optional<bool> heavy;  ///< recompute MatMul/Gemm/Conv; unset = the strategy's default
    bool allowsHeavy() const { return heavy.value_or(strategy != Strategy::MinCut); }
    std::string text() const;   ///< "sqrt", "budget=4096:no-heavy", ...
};

/// Parses `none`, `sqrt`, `all`, `mincut`, `pareto`, `budget=BYTES` (K/M/G suffixes allowed), each optionally followed by
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
    std::vector<std::string> keptForBackward;   ///< forward values kept that the backward did not read (min cut)
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

/// One recompute choice on the arena-vs-FLOPs plane.
struct RecomputePoint {
    std::string label;          ///< how it was found: store-all, sqrt, all, mincut, peak-greedy, ...
    int64_t arenaBytes = 0;     ///< planned arena of the rewritten training graph
    double extraFlops = 0;      ///< of the recomputed copies
    size_t dropped = 0;         ///< saved activations recomputed
    std::vector<std::string> droppedNames;
};

/// The trade-off of a training graph: every choice planned, the non-dominated ones (the Pareto
/// curve, lowest arena first) and the reference strategies.
struct RecomputeCurve {
    double forwardFlops = 0;
    size_t savedActivations = 0;
    std::vector<RecomputePoint> curve;  ///< no point has both a lower arena and fewer FLOPs than another
    RecomputePoint storeAll, sqrt, all;
    size_t evaluated = 0;               ///< choices planned
    std::string message;                ///< set when the graph is no training graph
};

/// The Pareto curve of `training` (unchanged). `options.heavy` as for budget (default allowed).
RecomputeCurve recomputeCurve(const ir::Model& training, const RecomputeOptions& options = {});
/// The curve as a table (one point a line, the references marked) and as JSON.
std::string curveToText(const RecomputeCurve& c);
nlohmann::ordered_json curveToJson(const RecomputeCurve& c);
nlohmann::ordered_json resultToJson(const RecomputeResult& r);

/// The `recompute` pass (Level None: on request). Param recompute.strategy (default sqrt) takes
/// parseRecomputeOptions' forms; an infeasible budget is Error(BadInput).
std::unique_ptr<passes::Pass> makeRecomputePass();

/// Planned arena of a graph as the recompute strategies measure it ("best" planner, model order).
int64_t plannedPeak(const ir::Model& m);

}  // namespace passlens::autodiff
