#pragma once
// Which nodes a (post-)dominator relation spans in the graph: the nodes on the paths between a node
// and its immediate (post-)dominator. The UI highlights them; kept here so it is tested without Qt.
#include <vector>

#include "analysis/Dominators.h"
#include "ir/Graph.h"

namespace passlens::analysis {

/// Nodes lying on at least one dataflow path from `from` to `to`, both included, in topological
/// order. `to == ir::kNone` stands for the virtual exit (every node reachable from `from`);
/// `from == ir::kNone` for the virtual entry (every node `to` is reachable from). Empty when `to`
/// cannot be reached from `from`.
std::vector<ir::NodeId> nodesOnPaths(const ir::Graph& g, ir::NodeId from, ir::NodeId to);

/// The region a tree node stands for: in a post-dominator tree the paths from `n` to its
/// immediate post-dominator, in a dominator tree the paths from its immediate dominator to `n`.
/// Topological order; `n` always included.
std::vector<ir::NodeId> pathToImmediateDominator(const ir::Graph& g, const DominatorTree& tree, ir::NodeId n);

}  // namespace passlens::analysis
