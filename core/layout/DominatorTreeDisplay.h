#pragma once
// A (post-)dominator tree as a drawing: one box per graph node (same keys, titles and colors as the
// graph view, so selection links by NodeId) plus the virtual entry/exit, and one edge from each
// immediate (post-)dominator to the node it dominates. Plain data; laid out with toLayoutRequest.
// Trees of large models are drawn in part: the `maxBoxes` nodes nearest a focus node in the tree.
#include "analysis/Dominators.h"
#include "layout/DisplayGraph.h"

namespace passlens::layout {

/// Key of the virtual root box (the tree's ir::kNone).
inline constexpr uint32_t kVirtualRootKey = kOutputKeyTag | 0x3FFFFFFFu;
/// Key of the box standing for the levels between the root and a partial drawing's top node.
inline constexpr uint32_t kElidedLevelsKey = kOutputKeyTag | 0x3FFFFFFEu;

struct DominatorTreeDisplayOptions {
    /// Leaves that are Constant nodes (in a post-dominator tree: every Constant) clutter the tree
    /// the way they would clutter the graph; the graph view folds them, so the tree drops them.
    bool hideConstantLeaves = true;
    /// At most this many node boxes (0 = the whole tree): a tree of 24k nodes drawn whole is
    /// neither readable nor quick to build on the GUI thread. The nodes kept are the ones nearest
    /// `focus` in the tree (breadth-first over parent and children), a connected piece of it;
    /// the levels above its top node are one "⋯" box, cut-off children a "+N below" line.
    size_t maxBoxes = 0;
    ir::NodeId focus = ir::kNone;  ///< kNone: the root's neighbourhood (the top of the tree)
};

DisplayGraph buildDominatorTreeDisplay(const ir::Graph& g, const analysis::DominatorTree& tree,
                                       const DominatorTreeDisplayOptions& options = {});

}  // namespace passlens::layout
