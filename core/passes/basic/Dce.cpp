// DCE: removes nodes whose outputs reach no graph output, initializers nothing reads, and
// model-local functions nothing calls.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "passes/basic/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// Names read inside subgraphs of `g`'s nodes that resolve to values of `g`.
std::unordered_set<ValueId> capturedValues(const Graph& g) {
    std::unordered_set<ValueId> out;
    for (NodeId n : g.nodeOrder())
        if (g.node(n).hasSubgraphs())
            for (const auto& name : g.capturedNames(n))
                if (auto v = g.findValue(name)) out.insert(*v);
    return out;
}

void collectCalls(const Graph& g, std::set<std::pair<std::string, std::string>>& calls) {
    g.forEachGraph([&](const Graph& sg) {
        for (NodeId n : sg.nodeOrder()) calls.insert({canonicalDomain(sg.node(n).domain), sg.node(n).opType});
    });
}

}  // namespace

void DeadCodeElimination::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule("dead-node");
        // Live = everything a graph output depends on (subgraph captures included).
        std::vector<bool> live(g.nodeIdLimit(), false);
        std::vector<NodeId> work;
        for (ValueId v : g.outputs())
            if (g.value(v).producer != kNone) work.push_back(g.value(v).producer);
        while (!work.empty()) {
            NodeId n = work.back();
            work.pop_back();
            if (live[n]) continue;
            live[n] = true;
            for (ValueId v : g.readsOf(n))
                if (g.value(v).producer != kNone && !live[g.value(v).producer]) work.push_back(g.value(v).producer);
        }
        auto order = g.topologicalOrder();
        if (!order) return;
        for (auto it = order->rbegin(); it != order->rend(); ++it) {
            if (live[*it]) continue;
            std::string name = g.node(*it).displayName();
            // Outputs of a dead node are read only by dead nodes, already erased (reverse order).
            rw.eraseNode(*it, name + " computes nothing a graph output needs");
        }
        rw.setRule("unused-initializer");
        auto captured = capturedValues(g);
        for (ValueId v : std::vector<ValueId>(g.initializerOrder())) {
            const Value& val = g.value(v);
            if (!val.consumers.empty() || val.isGraphOutput || captured.count(v)) continue;
            if (val.isGraphInput) {
                rw.missed({}, "initializer '" + val.name + "' kept: it is also a graph input (a caller may override it)");
                continue;
            }
            rw.removeInitializer(v, "initializer '" + val.name + "' is read by no node");
        }
    });
    // Functions: keep the ones any graph or function body calls (transitively).
    Model& m = ctx.model();
    std::set<std::pair<std::string, std::string>> calls;
    collectCalls(m.graph, calls);
    bool grew = true;
    std::vector<bool> used(m.functions.size(), false);
    while (grew) {
        grew = false;
        for (size_t i = 0; i < m.functions.size(); ++i)
            if (!used[i] && calls.count({canonicalDomain(m.functions[i].domain), m.functions[i].name})) {
                used[i] = true;
                grew = true;
                if (m.functions[i].body) collectCalls(*m.functions[i].body, calls);
            }
    }
    Rewriter& rw = ctx.rewriter();
    rw.setRule("unused-function");
    for (size_t i = m.functions.size(); i-- > 0;)
        if (!used[i]) {
            std::string fname = m.functions[i].name;
            m.functions.erase(m.functions.begin() + static_cast<std::ptrdiff_t>(i));
            rw.noteModelChange("function '" + fname + "' removed: nothing calls it");
            rw.applied({}, "removed function '" + fname + "': nothing calls it");
        }
}

}  // namespace passlens::passes
