#include "passes/Diff.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

bool sameNode(const Graph& ga, const Node& a, const Graph& gb, const Node& b) {
    if (a.opType != b.opType || a.domain != b.domain || a.inputs != b.inputs || a.outputs != b.outputs) return false;
    if (a.attributes.size() != b.attributes.size()) return false;
    for (size_t i = 0; i < a.attributes.size(); ++i) {
        const Attribute& x = a.attributes[i];
        const Attribute& y = b.attributes[i];
        if (x.name != y.name || x.kind != y.kind || x.valueToString(64) != y.valueToString(64)) return false;
        if (x.t && y.t && x.t != y.t && !x.t->sameContents(*y.t)) return false;
    }
    // A changed constant input (e.g. folded weights) counts as a change of the node.
    for (size_t i = 0; i < a.inputs.size(); ++i) {
        if (a.inputs[i] == kNone || !ga.hasValue(a.inputs[i]) || !gb.hasValue(b.inputs[i])) continue;
        const auto& ia = ga.value(a.inputs[i]).initializer;
        const auto& ib = gb.value(b.inputs[i]).initializer;
        if ((ia == nullptr) != (ib == nullptr)) return false;
        if (ia && ia != ib && !ia->sameContents(*ib)) return false;
    }
    return true;
}

}  // namespace

GraphDiff diffGraphs(const Graph& before, const Graph& after) {
    GraphDiff d;
    for (NodeId n : before.nodeOrder()) {
        if (!after.hasNode(n)) d.removed.push_back(n);
        else if (!sameNode(before, before.node(n), after, after.node(n))) d.changed.push_back(n);
    }
    for (NodeId n : after.nodeOrder())
        if (!before.hasNode(n)) {
            d.added.push_back(n);
            if (!after.node(n).provenance.empty()) d.origins[n] = after.node(n).provenance;
        }
    for (ValueId v : before.valueIds())
        if (!after.hasValue(v)) d.removedValues.push_back(v);
    for (ValueId v : after.valueIds())
        if (!before.hasValue(v)) d.addedValues.push_back(v);
    return d;
}

}  // namespace passlens::passes
