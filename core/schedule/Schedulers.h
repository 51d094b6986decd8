#pragma once
// Topological orders that change the peak-live bytes, and a lower bound that holds for every order.
//   exporter  the model's node order
//   dfs       reverse DFS from the outputs, inputs in order (ONNX Runtime's default order)
//   lpmf      torch.compile's "least peak memory first" greedy (reorder_for_peak_memory)
//   bfs       torch.compile's BFS: the ready node whose predecessors ran earliest
//   size-dfs  torch.compile's DFS: nodes and their inputs visited smallest (reads + writes) first
//   greedy    the best of lpmf, bfs and size-dfs (torch.compile's portfolio)
//   search    exact: memoized search over scheduled-node sets, split at cut nodes, pruned with the
//             best greedy peak as the budget; falls back to the best order found at the state cap
//   best      the lowest peak of all the above (never above exporter order)
#include <cstdint>
#include <string>
#include <vector>

#include "schedule/Problem.h"

namespace passlens::schedule {

struct SearchOptions {
    int64_t stateCap = 300'000;       ///< memo entries over all segments before falling back
    size_t maxSegmentNodes = 4000;    ///< a larger segment keeps its greedy order (recursion depth)
    bool segment = true;              ///< split at cut nodes (off only to test that splitting is exact)
};

struct ScheduleRun {
    std::string name;
    std::vector<int> order;       ///< node indices of the problem
    int64_t peakBytes = 0;        ///< simulated peak of the order
    double ms = 0;
    bool optimal = false;         ///< proven: the search finished, or the peak meets the any-order bound
    int64_t statesExplored = 0;   ///< search only
    int segments = 0;             ///< search only: segments between cut nodes
    int segmentsSearched = 0;     ///< search only: segments whose greedy order was not already good enough
    size_t largestSegment = 0;    ///< search only: nodes
    std::string fallback;         ///< search only: why the result is not proven optimal (empty when it is)
};

/// The names accepted by runScheduler, in report order.
const std::vector<std::string>& schedulerNames();

/// Runs one named scheduler (throws BadInput on an unknown name). The order is always topological.
ScheduleRun runScheduler(const Problem& p, const std::string& name, const SearchOptions& options = {});

// The single schedulers (exposed for tests).
std::vector<int> exporterOrder(const Problem& p);
std::vector<int> reverseDfsOrder(const Problem& p);
std::vector<int> lpmfOrder(const Problem& p);
std::vector<int> bfsOrder(const Problem& p);
std::vector<int> sizeDfsOrder(const Problem& p);
ScheduleRun searchOrder(const Problem& p, const SearchOptions& options, const std::vector<int>& incumbent);

/// A lower bound on the peak of every topological order.
struct AnyOrderBound {
    int64_t bytes = 0;
    int node = -1;                ///< where it is reached
    int64_t workingSetBytes = 0;  ///< the largest inputs + outputs + workspace of one node (in-place counted once)
    bool ancestorTerm = false;    ///< the ancestor/descendant term was computed (skipped on very large graphs)
    std::vector<int64_t> perNode; ///< the bound at each node
};
AnyOrderBound anyOrderBound(const Problem& p);

/// A node with no predecessors, no workspace, and readers for all its outputs (a Constant, a Shape
/// of a graph input):
/// running it right before its first reader never raises the peak (it frees nothing, and its
/// outputs then live the shortest time), so some optimal order does that.
bool isDelayableSource(const Problem& p, int v);
/// The order with every delayable source moved right before its first reader (never a higher peak).
std::vector<int> delaySources(const Problem& p, const std::vector<int>& order);

/// Cut nodes: every other node (delayable sources aside) is an ancestor or a descendant, so every
/// order runs the same nodes before them. In topological order; free[v] marks the delayable sources,
/// which join the segment of their first reader.
struct Cuts {
    std::vector<int> cutNodes;
    std::vector<bool> free;
};
Cuts findCuts(const Problem& p);

}  // namespace passlens::schedule
