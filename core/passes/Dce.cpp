// Dead-code elimination: nodes whose outputs reach no graph output (subgraph captures count as
// reads), initializers nothing reads, and model-local functions no node calls.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"

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
    /// f(v) for each value node `n` reads: its inputs, or readsOf (captures too) when it holds
    /// subgraphs; no vector per node on the common path.
    template <typename F>
    static void forEachRead(const Graph& g, NodeId n, F&& f) {
        const Node& node = g.node(n);
        if (node.hasSubgraphs()) {
            for (ValueId v : g.readsOf(n)) f(v);
            return;
        }
        for (ValueId v : node.inputs)
            if (v != kNone) f(v);
    }

    static void sweepGraph(Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("dead-node");
        // Liveness backwards from the graph outputs, through explicit and captured reads.
        // Flags indexed by value id (ids are dense), not hash sets: this runs on every graph size.
        std::vector<char> liveValues(g.valueIdLimit(), 0);
        for (ValueId v : g.outputs()) liveValues[v] = 1;
        auto order = g.topologicalOrder().value_or(g.nodeOrder());
        std::vector<NodeId> dead;
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const Node& n = g.node(*it);
            bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                                    [&](ValueId v) { return v != kNone && liveValues[v]; });
            if (!live) { dead.push_back(*it); continue; }
            forEachRead(g, *it, [&](ValueId v) { liveValues[v] = 1; });
        }
        for (NodeId n : dead) {  // consumers first (reverse topological order)
            // Outputs read only by already-erased nodes are unread now.
            rw.eraseNode(n, "no output of " + g.node(n).displayName() + " reaches a graph output");
        }
        rw.setRule("unused-initializer");
        std::vector<char> read(g.valueIdLimit(), 0);
        for (NodeId n : g.nodeOrder()) forEachRead(g, n, [&](ValueId v) { read[v] = 1; });
        std::vector<ValueId> inits = g.initializerOrder();
        for (ValueId v : inits) {
            const Value& val = g.value(v);
            if (read[v] || val.isGraphOutput || !val.consumers.empty()) continue;
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
        const Model& m = ctx.model();
        if (m.functions.empty()) return;
        // Called = referenced by a node of the main graph (any depth) or of a called function, transitively.
        std::set<std::pair<std::string, std::string>> called;
        auto collect = [&](const Graph& g) {
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
