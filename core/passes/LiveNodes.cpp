// Liveness and freed-node counts: see LiveNodes.h.
#include "passes/LiveNodes.h"

#include <set>

namespace passlens::passes {

using namespace passlens::ir;

Liveness::Liveness(const Graph& g) : live_(g.nodeIdLimit(), 0) {
    std::vector<char> values(g.valueIdLimit(), 0);
    for (ValueId v : g.outputs()) values[v] = 1;
    const std::vector<NodeId> order = g.topologicalOrder().value_or(g.nodeOrder());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Node& n = g.node(*it);
        for (ValueId o : n.outputs)
            if (o != kNone && values[o]) live_[*it] = 1;
        if (!live_[*it]) continue;
        for (ValueId v : n.hasSubgraphs() ? g.readsOf(*it) : n.inputs)
            if (v != kNone) values[v] = 1;
    }
}

size_t exclusiveNodes(const Rewriter& rw, const Liveness& live, const std::vector<NodeId>& tops, bool captures) {
    const Graph& g = rw.graph();
    std::set<NodeId> dead(tops.begin(), tops.end());
    std::vector<NodeId> work;
    auto producersOf = [&](NodeId n) {
        for (ValueId in : g.node(n).inputs)
            if (in != kNone && g.value(in).producer != kNone) work.push_back(g.value(in).producer);
    };
    for (NodeId top : tops) producersOf(top);
    // A node reached before all its readers are counted is looked at again when the last one is.
    for (size_t guard = 0; !work.empty() && guard < 65536; ++guard) {
        const NodeId p = work.back();
        work.pop_back();
        if (dead.count(p) || g.node(p).hasSubgraphs()) continue;
        bool onlyFeedsDead = true;
        for (ValueId o : g.node(p).outputs) {
            if (o == kNone) continue;
            if (g.value(o).isGraphOutput || (captures && rw.isCapturedBySubgraph(o))) onlyFeedsDead = false;
            for (NodeId r : g.value(o).consumers)
                if (!dead.count(r) && live.live(r)) onlyFeedsDead = false;
        }
        if (!onlyFeedsDead) continue;
        dead.insert(p);
        producersOf(p);
    }
    return dead.size();
}

}  // namespace passlens::passes
