#include "layout/DominatorTreeDisplay.h"

#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace passlens::layout {

namespace {

/// The nodes to draw: all of `eligible`, or the `limit` nearest `focus` (breadth-first in the
/// tree, parent first), which is a connected piece of the tree.
std::unordered_set<ir::NodeId> pickNodes(const analysis::DominatorTree& tree, const std::vector<ir::NodeId>& eligible,
                                         size_t limit, ir::NodeId focus) {
    std::unordered_set<ir::NodeId> keep;
    if (limit == 0 || eligible.size() <= limit) {
        keep.insert(eligible.begin(), eligible.end());
        return keep;
    }
    const std::unordered_set<ir::NodeId> isEligible(eligible.begin(), eligible.end());
    std::unordered_map<ir::NodeId, std::vector<ir::NodeId>> children;  // kNone = the root
    for (ir::NodeId n : eligible) children[tree.idom(n)].push_back(n);
    std::deque<ir::NodeId> queue;
    if (focus != ir::kNone && isEligible.count(focus)) {
        queue.push_back(focus);
        keep.insert(focus);
    } else {
        for (ir::NodeId c : children[ir::kNone])
            if (keep.size() < limit && keep.insert(c).second) queue.push_back(c);
    }
    while (!queue.empty() && keep.size() < limit) {
        const ir::NodeId n = queue.front();
        queue.pop_front();
        std::vector<ir::NodeId> next;
        if (ir::NodeId p = tree.idom(n); p != ir::kNone) next.push_back(p);
        if (auto it = children.find(n); it != children.end()) next.insert(next.end(), it->second.begin(), it->second.end());
        for (ir::NodeId m : next)
            if (keep.size() < limit && keep.insert(m).second) queue.push_back(m);
    }
    return keep;
}

}  // namespace

DisplayGraph buildDominatorTreeDisplay(const ir::Graph& g, const analysis::DominatorTree& tree,
                                       const DominatorTreeDisplayOptions& options) {
    DisplayGraph dg;
    std::unordered_set<ir::NodeId> parents;
    for (ir::NodeId n : tree.nodes()) parents.insert(tree.idom(n));
    std::vector<ir::NodeId> eligible;
    eligible.reserve(tree.nodes().size());
    for (ir::NodeId n : tree.nodes()) {
        const ir::Node& node = g.node(n);
        if (options.hideConstantLeaves && node.opType == "Constant" && node.domain.empty() && !parents.count(n))
            continue;
        eligible.push_back(n);
    }
    const auto keep = pickNodes(tree, eligible, options.maxBoxes, options.focus);
    std::unordered_map<ir::NodeId, size_t> hiddenChildren;
    if (keep.size() < eligible.size())
        for (ir::NodeId n : eligible)
            if (!keep.count(n) && keep.count(tree.idom(n))) ++hiddenChildren[tree.idom(n)];

    DisplayNode root;
    root.key = kVirtualRootKey;
    root.kind = tree.isPost() ? DisplayNode::Kind::Output : DisplayNode::Kind::Input;
    root.title = tree.isPost() ? "exit" : "entry";
    root.subtitle = tree.isPost() ? "virtual: all graph outputs" : "virtual: all graph inputs";
    root.category = tree.isPost() ? OpCategory::Output : OpCategory::Input;
    dg.nodes.push_back(root);

    for (ir::NodeId n : eligible) {
        if (!keep.count(n)) continue;
        const ir::Node& node = g.node(n);
        DisplayNode dn;
        dn.key = n;
        dn.node = n;
        dn.title = node.opType;
        dn.subtitle = node.name.empty() ? node.displayName() : node.name;
        dn.category = categorize(node.opType, node.domain);
        dn.hasSubgraphs = node.hasSubgraphs();
        if (auto it = hiddenChildren.find(n); it != hiddenChildren.end())
            dn.foldedLines.push_back("+" + std::to_string(it->second) + " more below");
        dg.nodes.push_back(std::move(dn));
        ++dg.opBoxCount;
        const ir::NodeId parent = tree.idom(n);
        if (parent == ir::kNone || keep.count(parent)) {
            dg.edges.push_back({parent == ir::kNone ? kVirtualRootKey : parent, n, ir::kNone, {}});
            continue;
        }
        // The top of a partial drawing: the levels up to the root are one box.
        size_t levels = 0;
        for (ir::NodeId p = parent; p != ir::kNone; p = tree.idom(p)) ++levels;
        DisplayNode elided;
        elided.key = kElidedLevelsKey;
        elided.kind = DisplayNode::Kind::Output;
        elided.title = "⋯";
        elided.subtitle = std::to_string(levels) + (levels == 1 ? " level" : " levels") + " up to the root";
        elided.category = OpCategory::Other;
        dg.nodes.push_back(std::move(elided));
        dg.edges.push_back({kVirtualRootKey, kElidedLevelsKey, ir::kNone, {}});
        dg.edges.push_back({kElidedLevelsKey, n, ir::kNone, {}});
    }
    return dg;
}

}  // namespace passlens::layout
