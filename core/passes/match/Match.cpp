#include "passes/match/Match.h"

#include <algorithm>

#include "ir/Model.h"

namespace passlens::passes::match {

using namespace passlens::ir;

bool inDefaultDomain(const Node& n) { return canonicalDomain(n.domain).empty(); }

TensorPtr constantOf(const Graph& g, ValueId v) {
    if (v == kNone || !g.hasValue(v)) return nullptr;
    const Value& val = g.value(v);
    if (val.initializer) return val.isGraphInput ? nullptr : val.initializer;
    if (val.producer == kNone) return nullptr;
    const Node& p = g.node(val.producer);
    if (p.opType != "Constant" || !inDefaultDomain(p)) return nullptr;
    if (const Attribute* a = p.attr("value"); a && a->t) return a->t;
    return nullptr;
}

int64_t rankOf(const Graph& g, ValueId v) {
    if (auto r = g.value(v).rank()) return static_cast<int64_t>(*r);
    if (TensorPtr c = constantOf(g, v)) return static_cast<int64_t>(c->dims.size());
    return -1;
}

std::vector<NodeId> subgraphReaders(const Graph& g, ValueId v) {
    std::vector<NodeId> out;
    const std::string& name = g.value(v).name;
    for (NodeId n : g.nodesWithSubgraphs()) {
        auto names = g.capturedNames(n);
        if (std::binary_search(names.begin(), names.end(), name)) out.push_back(n);
    }
    return out;
}

size_t readerCount(const Graph& g, ValueId v) {
    return g.value(v).consumers.size() + (g.value(v).isGraphOutput ? 1 : 0) + subgraphReaders(g, v).size();
}

bool hasSingleReader(const Graph& g, ValueId v) {
    const Value& val = g.value(v);
    return val.consumers.size() == 1 && !val.isGraphOutput && subgraphReaders(g, v).empty();
}

bool readOutside(const Graph& g, ValueId v, const std::vector<NodeId>& inside) {
    if (g.value(v).isGraphOutput) return true;
    for (NodeId c : g.value(v).consumers)
        if (std::find(inside.begin(), inside.end(), c) == inside.end()) return true;
    return !subgraphReaders(g, v).empty();
}

std::string readersOf(const Graph& g, ValueId v) {
    std::string s;
    for (NodeId c : g.value(v).consumers) s += (s.empty() ? "" : ", ") + g.node(c).displayName();
    if (g.value(v).isGraphOutput) s += (s.empty() ? "" : ", ") + std::string("the graph output");
    for (NodeId n : subgraphReaders(g, v)) s += (s.empty() ? "" : ", ") + std::string("a subgraph of ") + g.node(n).displayName();
    return s;
}

}  // namespace passlens::passes::match
