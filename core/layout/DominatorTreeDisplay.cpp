#include "layout/DominatorTreeDisplay.h"

#include <unordered_set>

namespace passlens::layout {

DisplayGraph buildDominatorTreeDisplay(const ir::Graph& g, const analysis::DominatorTree& tree,
                                       const DominatorTreeDisplayOptions& options) {
    DisplayGraph dg;
    std::unordered_set<ir::NodeId> parents;
    for (ir::NodeId n : tree.nodes()) parents.insert(tree.idom(n));

    DisplayNode root;
    root.key = kVirtualRootKey;
    root.kind = tree.isPost() ? DisplayNode::Kind::Output : DisplayNode::Kind::Input;
    root.title = tree.isPost() ? "exit" : "entry";
    root.subtitle = tree.isPost() ? "virtual: all graph outputs" : "virtual: all graph inputs";
    root.category = tree.isPost() ? OpCategory::Output : OpCategory::Input;
    dg.nodes.push_back(root);

    for (ir::NodeId n : tree.nodes()) {
        const ir::Node& node = g.node(n);
        if (options.hideConstantLeaves && node.opType == "Constant" && node.domain.empty() && !parents.count(n))
            continue;
        DisplayNode dn;
        dn.key = n;
        dn.node = n;
        dn.title = node.opType;
        dn.subtitle = node.name.empty() ? node.displayName() : node.name;
        dn.category = categorize(node.opType, node.domain);
        dn.hasSubgraphs = node.hasSubgraphs();
        dg.nodes.push_back(std::move(dn));
        ++dg.opBoxCount;
        const ir::NodeId parent = tree.idom(n);
        dg.edges.push_back({parent == ir::kNone ? kVirtualRootKey : parent, n, ir::kNone, {}});
    }
    return dg;
}

}  // namespace passlens::layout
