#pragma once
// A (post-)dominator tree as a drawing: one box per graph node (same keys, titles and colors as the
// graph view, so selection links by NodeId) plus the virtual entry/exit, and one edge from each
// immediate (post-)dominator to the node it dominates. Plain data; laid out with toLayoutRequest.
#include "analysis/Dominators.h"
#include "layout/DisplayGraph.h"

namespace passlens::layout {

/// Key of the virtual root box (the tree's ir::kNone).
inline constexpr uint32_t kVirtualRootKey = kOutputKeyTag | 0x3FFFFFFFu;

struct DominatorTreeDisplayOptions {
    /// Leaves that are Constant nodes (in a post-dominator tree: every Constant) clutter the tree
    /// the way they would clutter the graph; the graph view folds them, so the tree drops them.
    bool hideConstantLeaves = true;
};

DisplayGraph buildDominatorTreeDisplay(const ir::Graph& g, const analysis::DominatorTree& tree,
                                       const DominatorTreeDisplayOptions& options = {});

}  // namespace passlens::layout
