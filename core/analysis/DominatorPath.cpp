#include "analysis/DominatorPath.h"

#include "ir/Error.h"

namespace passlens::analysis {

namespace {

/// Marks every node reachable from `start` (included) following edges forward or backward.
/// The same edges as DominatorTree::build: consumers forward, readsOf producers backward.
std::vector<char> reach(const ir::Graph& g, ir::NodeId start, bool forward) {
    std::vector<char> seen(g.nodeIdLimit(), 0);
    std::vector<ir::NodeId> stack{start};
    seen[start] = 1;
    while (!stack.empty()) {
        ir::NodeId n = stack.back();
        stack.pop_back();
        auto visit = [&](ir::NodeId m) {
            if (m != ir::kNone && g.hasNode(m) && !seen[m]) { seen[m] = 1; stack.push_back(m); }
        };
        if (forward) {
            for (ir::ValueId v : g.node(n).outputs)
                if (v != ir::kNone)
                    for (ir::NodeId c : g.value(v).consumers) visit(c);
        } else {
            for (ir::ValueId v : g.readsOf(n))
                if (v != ir::kNone) visit(g.value(v).producer);
        }
    }
    return seen;
}

}  // namespace

std::vector<ir::NodeId> nodesOnPaths(const ir::Graph& g, ir::NodeId from, ir::NodeId to) {
    for (ir::NodeId n : {from, to})
        if (n != ir::kNone && !g.hasNode(n))
            throw Error(ErrorKind::BadInput, "path: unknown node id " + std::to_string(n));
    std::vector<char> after, before;  // reachable from `from` / reaching `to`
    if (from != ir::kNone) after = reach(g, from, true);
    if (to != ir::kNone) before = reach(g, to, false);
    auto topo = g.topologicalOrder();
    if (!topo) throw Error(ErrorKind::BadInput, "path: the graph has a cycle");
    std::vector<ir::NodeId> out;
    for (ir::NodeId n : *topo) {
        const bool a = after.empty() || after[n], b = before.empty() || before[n];
        if (a && b) out.push_back(n);
    }
    return out;
}

std::vector<ir::NodeId> pathToImmediateDominator(const ir::Graph& g, const DominatorTree& tree, ir::NodeId n) {
    const ir::NodeId d = tree.idom(n);
    return tree.isPost() ? nodesOnPaths(g, n, d) : nodesOnPaths(g, d, n);
}

}  // namespace passlens::analysis
