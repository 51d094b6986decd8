// Dead-code elimination: nodes whose outputs reach no graph output (subgraph captures count as
// reads), initializers nothing reads, and model-local functions no node calls.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "passes/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

class DcePass final : public Pass {
public:
    std::string name() const override { return "dce"; }
    bool preservesValueTypes() const override { return true; }
    std::string description() const override { return "Removes nodes, initializers and functions that reach no graph output"; }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) { sweepGraph(rw); });
        sweepFunctions(ctx);
    }

private:
    static void sweepGraph(Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule("dead-node");
        // Liveness backwards from the graph outputs, through explicit and captured reads.
        std::unordered_set<ValueId> liveValues(g.outputs().begin(), g.outputs().end());
        auto order = g.topologicalOrder().value_or(g.nodeOrder());
        std::vector<NodeId> dead;
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const Node& n = g.node(*it);
            bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                                    [&](ValueId v) { return v != kNone && liveValues.count(v); });
            if (!live) { dead.push_back(*it); continue; }
            for (ValueId v : g.readsOf(*it)) liveValues.insert(v);
        }
        for (NodeId n : dead) {  // consumers first (reverse topological order)
            // Outputs read only by already-erased nodes are unread now.
            rw.eraseNode(n, "no output of " + g.node(n).displayName() + " reaches a graph output");
        }
        rw.setRule("unused-initializer");
        std::unordered_set<ValueId> read;
        for (NodeId n : g.nodeOrder())
            for (ValueId v : g.readsOf(n)) read.insert(v);
        std::vector<ValueId> inits = g.initializerOrder();
        for (ValueId v : inits) {
            const Value& val = g.value(v);
            if (read.count(v) || val.isGraphOutput || !val.consumers.empty()) continue;
            if (val.isGraphInput) {
                rw.missed({}, "not removed: initializer '" + val.name + "' is also a graph input (callers may override it)", {v});
                continue;
            }
            rw.removeInitializer(v, "initializer '" + val.name + "' is read by no node");
        }
        rw.removeDeadValues();
        rw.setRule({});
    }

    static void sweepFunctions(PassContext& ctx) {
        Model& m = ctx.model();
        if (m.functions.empty()) return;
        // Called = referenced by a node of the main graph (any depth) or of a called function, transitively.
        std::set<std::pair<std::string, std::string>> called;
        auto collect = [&](Graph& g) {
            g.forEachGraph([&](const Graph& sg) {
                for (NodeId n : sg.nodeOrder()) called.insert({canonicalDomain(sg.node(n).domain), sg.node(n).opType});
            });
        };
        collect(m.graph);
        for (bool grew = true; grew;) {
            grew = false;
            size_t before = called.size();
            for (auto& f : m.functions)
                if (called.count({canonicalDomain(f.domain), f.name}) && f.body) collect(*f.body);
            grew = called.size() != before;
        }
        Rewriter& rw = ctx.rewriter();
        rw.setRule("unused-function");
        for (size_t i = m.functions.size(); i-- > 0;) {
            const Function& f = m.functions[i];
            if (called.count({canonicalDomain(f.domain), f.name})) continue;
            rw.removeFunction(i, "function '" + f.domain + "." + f.name + "' is called by no node");
        }
        rw.setRule({});
    }
};

}  // namespace

std::unique_ptr<Pass> makeDcePass() { return std::make_unique<DcePass>(); }

}  // namespace passlens::passes
