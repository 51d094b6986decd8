#include "ir/Verifier.h"

#include <unordered_set>

#include "ir/Error.h"

namespace passlens::ir {

namespace {

using Scope = std::vector<std::unordered_set<std::string>>;

void verifyIn(const Graph& g, Scope& scope, const std::string& where, VerifyResult& r) {
    // Names defined so far are only needed by subgraphs (their outer scope); without any, a name
    // is defined twice exactly when the graph's name table maps it to another value.
    const bool subgraphsSeeNames = !g.nodesWithSubgraphs().empty();
    std::unordered_set<std::string> defined;
    if (subgraphsSeeNames) {
        for (ValueId v : g.inputs()) defined.insert(g.value(v).name);
        for (ValueId v : g.initializerOrder()) defined.insert(g.value(v).name);
    }
    auto definedTwice = [&](ValueId v, const std::string& name) {
        if (subgraphsSeeNames) return !defined.insert(name).second;
        if (name.empty()) return false;  // reported as an unnamed output
        const auto owner = g.findValue(name);
        return !owner || *owner != v;
    };

    auto inOuterScope = [&](const std::string& name) {
        for (const auto& s : scope)
            if (s.count(name)) return true;
        return false;
    };

    auto order = g.topologicalOrder();
    if (!order) {
        std::vector<NodeId> cycle = g.findCycle();
        r.problems.push_back((where.empty() ? "graph '" + g.name + "' " : where) + "has a cycle through node '" +
                             (cycle.empty() ? std::string("?") : g.node(cycle.front()).displayName()) + "' (" +
                             g.describeCycle(cycle) + ")");
        return;
    }
    for (NodeId id : *order) {
        const Node& n = g.node(id);
        for (ValueId v : n.inputs) {
            if (v == kNone) continue;
            const Value& val = g.value(v);
            if (val.producer == kNone && !val.isGraphInput && !val.initializer) {
                if (val.isOuterScope) {
                    if (!inOuterScope(val.name))
                        r.problems.push_back(where + "node '" + n.displayName() + "' reads '" + val.name +
                                             "', which no enclosing graph defines");
                } else {
                    r.problems.push_back(where + "node '" + n.displayName() + "' reads undefined value '" + val.name + "'");
                }
            }
        }
        for (ValueId v : n.outputs) {
            if (v == kNone) continue;
            const Value& val = g.value(v);
            if (val.producer != id)
                r.problems.push_back(where + "node '" + n.displayName() + "' output '" + val.name + "' has another producer");
            if (val.name.empty()) r.problems.push_back(where + "node '" + n.displayName() + "' has an unnamed output");
            if (definedTwice(v, val.name))
                r.problems.push_back(where + "value '" + val.name + "' is defined twice (second time by node '" + n.displayName() + "')");
        }
        if (n.hasSubgraphs()) {
            scope.push_back(defined);
            for (const auto& a : n.attributes) {
                if (a.g) verifyIn(*a.g, scope, where + "subgraph '" + a.name + "' of node '" + n.displayName() + "': ", r);
                for (const auto& sg : a.graphs)
                    verifyIn(*sg, scope, where + "subgraph '" + a.name + "' of node '" + n.displayName() + "': ", r);
            }
            scope.pop_back();
        }
    }
    for (ValueId v : g.outputs()) {
        const Value& val = g.value(v);
        if (val.producer == kNone && !val.isGraphInput && !val.initializer && !(val.isOuterScope && inOuterScope(val.name)))
            r.problems.push_back(where + "graph output '" + val.name + "' is never produced");
    }
}

}  // namespace

VerifyResult verifyGraph(const Graph& g) {
    VerifyResult r;
    Scope scope;
    verifyIn(g, scope, "", r);
    return r;
}

VerifyResult verifyModel(const Model& m) {
    VerifyResult r = verifyGraph(m.graph);
    for (const auto& f : m.functions) {
        if (!f.body) continue;
        VerifyResult fr = verifyGraph(*f.body);
        for (auto& p : fr.problems) r.problems.push_back("function '" + f.name + "': " + p);
    }
    return r;
}

void verifyOrThrow(const Model& m) {
    VerifyResult r = verifyModel(m);
    if (!r.ok()) throwBadInput(r.problems.front());
}

}  // namespace passlens::ir
