#pragma once
// Dominator and post-dominator trees of a dataflow graph (Cooper-Harvey-Kennedy iterative
// algorithm over the topological order). Several inputs/outputs hang off a virtual entry/exit,
// reported as ir::kNone.
#include <cstdint>
#include <vector>

#include "ir/Graph.h"

namespace passlens::analysis {

/// Immediate dominators of a DAG given in topological order: vertex 0 is the root, preds[v]
/// lists the predecessors of v (all < v). Returns idom per vertex (idom[0] == 0).
std::vector<uint32_t> computeImmediateDominators(const std::vector<std::vector<uint32_t>>& preds);

class DominatorTree {
public:
    /// post = true builds the post-dominator tree (edges reversed, virtual exit as root).
    static DominatorTree build(const ir::Graph& g, bool post = false);

    bool isPost() const { return post_; }
    /// Immediate (post-)dominator of n; ir::kNone = the virtual entry/exit.
    ir::NodeId idom(ir::NodeId n) const;
    /// a (post-)dominates b (reflexive). ir::kNone stands for the virtual root.
    bool dominates(ir::NodeId a, ir::NodeId b) const;
    /// Nearest common (post-)dominator; ir::kNone = the virtual root.
    ir::NodeId lca(ir::NodeId a, ir::NodeId b) const;
    /// Nodes in the order the tree was built (topological; reversed for post).
    const std::vector<ir::NodeId>& nodes() const { return nodes_; }
    /// Children of n in the tree (kNone = root).
    std::vector<ir::NodeId> children(ir::NodeId n) const;

private:
    uint32_t index(ir::NodeId n) const;
    ir::NodeId nodeAt(uint32_t i) const { return i == 0 ? ir::kNone : nodes_[i - 1]; }
    bool post_ = false;
    std::vector<ir::NodeId> nodes_;   ///< vertex i+1 <-> nodes_[i]
    std::vector<uint32_t> idom_;      ///< per vertex
    std::vector<uint32_t> depth_;     ///< per vertex
    std::vector<uint32_t> indexOf_;   ///< NodeId -> vertex, UINT32_MAX if absent
};

}  // namespace passlens::analysis
