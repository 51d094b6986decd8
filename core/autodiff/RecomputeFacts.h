#pragma once
// Internals shared by the recomputation strategies (Recompute.cpp) and the solvers over recompute
// sets (RecomputeSearch.cpp): the forward facts of a training graph, the rewrite that inserts the
// copies, and the evaluation of one choice by planning the rewritten graph — the arena the planner
// reaches on the training schedule, never an estimate.
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "ir/Model.h"
#include "memory/MemoryPlan.h"

namespace passlens::passes {
class Rewriter;
}

namespace passlens::autodiff::remat {

bool isHeavyOp(const ir::Node& n);

/// The forward facts of a training graph the strategies need, computed once.
class ForwardFacts {
public:
    ForwardFacts(const ir::Graph& g, bool allowHeavy);

    const ir::Graph& graph() const { return g_; }
    bool allowsHeavy() const { return allowHeavy_; }
    Role roleOf(ir::NodeId n) const { return role_.at(n); }
    const std::vector<ir::NodeId>& forwardNodes() const { return forward_; }
    size_t forwardPos(ir::NodeId n) const { return forwardPos_.at(n); }
    /// Saved activations of known size, in forward order: what a strategy may drop.
    const std::vector<ir::ValueId>& candidates() const { return candidates_; }
    bool isSaved(ir::ValueId v) const { return saved_.count(v) > 0; }
    int64_t bytesOf(ir::ValueId v) const;
    /// Alive for the whole run anyway (and never recomputed): inputs, parameters, outputs, Constants.
    bool isStatic(ir::ValueId v) const;
    /// A forward value the backward region must get from a copy when `drop` is dropped and the
    /// forward values in `keep` (beyond the saved ones) are kept for the backward pass too.
    bool needsCopy(ir::ValueId u, const std::unordered_set<ir::ValueId>& drop,
                   const std::unordered_set<ir::ValueId>* keep = nullptr) const;
    /// The rule that forbids copying n, or empty.
    std::string banRule(ir::NodeId n, std::string* detail) const;
    /// Forward nodes to copy so every value in `values` can be recomputed, in forward order; the
    /// first banned node's rule in `rule` (then the closure is empty).
    std::vector<ir::NodeId> closure(const std::vector<ir::ValueId>& values, const std::unordered_set<ir::ValueId>& drop,
                                    std::string* rule = nullptr, std::string* detail = nullptr,
                                    const std::unordered_set<ir::ValueId>* keep = nullptr) const;
    double flopsOf(const std::vector<ir::NodeId>& nodes) const;
    double forwardFlops() const;

private:
    const ir::Graph& g_;
    bool allowHeavy_;
    std::unordered_map<ir::NodeId, Role> role_;
    std::vector<ir::NodeId> forward_;
    std::unordered_map<ir::NodeId, size_t> forwardPos_;
    std::unordered_set<ir::ValueId> saved_;
    std::vector<ir::ValueId> candidates_;
};

/// Rewrites the graph: copies of `nodes` (forward order) produce the dropped values for the
/// backward readers, each placed just before its earliest reader. Returns the copies.
std::vector<ir::NodeId> insertCopies(passes::Rewriter& rw, const ForwardFacts& facts, const std::vector<ir::NodeId>& nodes,
                                     const std::unordered_set<ir::ValueId>& drop);

/// A recompute set decided, with what it costs.
struct Choice {
    std::vector<ir::ValueId> drop;         ///< saved activations recomputed
    std::vector<ir::ValueId> keep;         ///< forward values kept beyond the saved ones (a min cut's)
    std::vector<ir::ValueId> checkpoints;  ///< kept on purpose (Chen's segment ends)
    std::vector<ir::NodeId> copies;
    int64_t peak = 0;                      ///< planned arena of the rewritten graph ("best" planner)
    int64_t bound = 0;                     ///< its most bytes live at one step (≤ peak)
    bool planned = true;                   ///< false: the bound already exceeded the limit; peak = bound
    double flops = 0;                      ///< of the copies
    std::string label;                     ///< where it came from: "sqrt", "mincut", "greedy", ...
};

/// Plans the graph with `drop` recomputed (and `keep` kept): peak, copies and FLOPs. With `plan`
/// the rewritten graph's plan too (steps and lifetimes of the probe). When the live-bytes bound
/// exceeds `planIfBoundAtMost` the planners are skipped (the choice cannot fit such a limit).
Choice evaluate(const ir::Model& m, const ForwardFacts& facts, std::vector<ir::ValueId> drop,
                std::vector<ir::ValueId> keep = {}, memory::MemoryPlan* plan = nullptr,
                int64_t planIfBoundAtMost = std::numeric_limits<int64_t>::max());

/// The candidates whose recomputation no rule forbids, given `keep`; fills keptByRule.
std::vector<ir::ValueId> droppable(const ForwardFacts& facts, const std::unordered_set<ir::ValueId>& keep,
                                   std::vector<KeptTensor>& keptByRule, bool standalone);
/// Saved activations that alone cross a cut of the forward schedule (a chain's layer boundaries).
std::vector<ir::ValueId> separators(const ForwardFacts& facts);
/// Chen's segmentation with segment length k.
Choice segmented(const ir::Model& m, const ForwardFacts& facts, const std::vector<ir::ValueId>& seps, size_t k,
                 std::vector<KeptTensor>& kept);
/// Chen's √n: the segment lengths around √(separators), the lowest arena wins (none when no
/// segmentation lowers `peakBefore`).
Choice chooseSqrt(const ir::Model& m, const ForwardFacts& facts, std::vector<KeptTensor>& keptByRule, int64_t peakBefore);
/// Every droppable activation recomputed.
Choice chooseAll(const ir::Model& m, const ForwardFacts& facts, std::vector<KeptTensor>& keptByRule);

// ---- solvers (RecomputeSearch.cpp) ----

/// PyTorch-partitioner-style minimum cut: the forward values to keep for the backward pass with
/// the fewest bytes such that every value the backward pass reads is kept or recomputable from
/// kept ones; banned ops (ForwardFacts::banRule) must be kept when needed.
Choice chooseMinCut(const ir::Model& m, const ForwardFacts& facts);

/// Fewest extra FLOPs whose planned arena is at most `budget`; drop empty and peak = the lowest
/// arena reached (in `lowest`) when nothing fits. Seeds: √n, Chen's segmentations, all, the min
/// cut, cheapest-first prefixes and a peak-directed greedy; each fitting seed is then trimmed
/// (activations kept again, most expensive first, while the arena still fits).
Choice solveBudget(const ir::Model& m, const ForwardFacts& facts, int64_t budget, int64_t peakBefore, int64_t* lowest);

/// Every evaluated choice (none, √n, all, min cut, the greedy trajectory, trimmed seeds).
std::vector<Choice> exploreChoices(const ir::Model& m, const ForwardFacts& facts, int64_t peakBefore);

}  // namespace passlens::autodiff::remat
