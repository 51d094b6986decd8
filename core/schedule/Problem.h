#pragma once
// The scheduling problem of one graph as plain data: nodes (in exporter order), the tensors they
// produce and read, per-node workspace and in-place hosts. Sizes come from the memory module's
// lifetime analysis (memory::analyzeMemory), so a schedule's peak here is the planners' peak-live
// bound for that order (checked in tests against analyzeMemory on every fixture).
#include <cstdint>
#include <vector>

#include "ir/Model.h"
#include "memory/MemoryPlan.h"

namespace passlens::schedule {

struct Problem {
    struct Tensor {
        int64_t bytes = 0;          ///< 0 for static, unknown-size or edge-only values
        int producer = -1;          ///< node index
        std::vector<int> readers;   ///< distinct node indices
    };
    std::vector<ir::NodeId> nodes;          ///< node index -> graph node (exporter order); empty for hand-built problems
    std::vector<Tensor> tensors;
    std::vector<int64_t> workspace;         ///< per node
    /// Per node: input tensors output 0 may overwrite in place (same bytes and element type,
    /// elementwise op), in input order; the first one that dies at this node is taken.
    std::vector<std::vector<int>> inplaceHosts;
    // Derived by finish():
    std::vector<std::vector<int>> preds, succs;     ///< distinct node dependencies
    std::vector<std::vector<int>> inputs, outputs;  ///< tensor indices per node (inputs distinct)

    size_t size() const { return workspace.size(); }
    /// Fills preds/succs/inputs/outputs from the tensors. Throws BadInput on a bad index or a cycle.
    void finish();
};

/// The problem of a graph: exporter order (memory::makeSchedule Model), sizes and workspace from
/// memory::analyzeMemory, in-place hosts by the memory module's rule.
Problem buildProblem(const ir::Model& m, const ir::Graph& g);

/// Bytes live while node v runs, given the live bytes before it and the remaining reader counts.
/// The one cost rule every scheduler and the search use.
struct Simulator {
    const Problem& p;
    std::vector<int> remaining;   ///< unscheduled readers per tensor
    std::vector<int> waiting;     ///< unscheduled predecessors per node
    int64_t live = 0;             ///< bytes of produced tensors that still have an unscheduled reader

    explicit Simulator(const Problem& problem);
    int64_t stepBytes(int v) const;      ///< live + outputs + workspace - in-place saving
    int64_t bytesAfter(int v) const;     ///< live once v ran and freed its dead inputs
    void apply(int v);
    void undo(int v);
};

/// The peak of an order (max stepBytes); perStep gets each step's bytes.
int64_t simulatePeak(const Problem& p, const std::vector<int>& order, std::vector<int64_t>* perStep = nullptr);
bool isTopological(const Problem& p, const std::vector<int>& order);

/// Node indices -> graph schedule.
memory::Schedule toSchedule(const Problem& p, const std::vector<int>& order);

}  // namespace passlens::schedule
