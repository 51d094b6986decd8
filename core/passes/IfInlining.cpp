// if-known-condition: see IfInlining.h.
#include "passes/IfInlining.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>

#include "ir/Tensor.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// The condition of an If when it is a constant holding one bool.
std::optional<bool> knownCondition(const Graph& g, const Node& n) {
    if (n.inputs.empty() || n.inputs[0] == kNone) return std::nullopt;
    TensorPtr t = match::constantOf(g, n.inputs[0]);
    if (!t || t->dtype != DataType::Bool || t->elementCount() != 1 || t->data.size() < 1) return std::nullopt;
    return t->as<uint8_t>()[0] != 0;
}

/// Why branch `b` of If `n`, whose nodes in dataflow order are `order` (none: a cycle), cannot be
/// moved into the rewriter's graph (empty when it can).
std::string refusal(const Rewriter& rw, const Node& n, const Graph& b, const std::optional<std::vector<NodeId>>& order) {
    const Graph& g = rw.graph();
    if (!b.inputs().empty()) return "the branch declares inputs";
    if (b.outputs().size() != n.outputs.size())
        return "the branch has " + std::to_string(b.outputs().size()) + " outputs, the If " + std::to_string(n.outputs.size());
    std::set<ValueId> made;
    auto defined = [&](ValueId v) {
        if (v == kNone) return true;
        const Value& val = b.value(v);
        if (val.initializer || made.count(v)) return true;
        // A name the branch reads from outside: this graph defines it, or (in a subgraph) a
        // scope further out does.
        if (!val.isOuterScope) return false;
        auto outer = g.findValue(val.name);
        if (outer && std::find(n.outputs.begin(), n.outputs.end(), *outer) != n.outputs.end()) return false;  // its own output
        return outer.has_value() || !rw.graphPath().empty();
    };
    // Names reach subgraphs by name: a value the branch defines must not take a name that a
    // subgraph here reads from further out (it would shadow it), and a name the branch's own
    // subgraphs read from it must stay that name here (it is free, so the copy keeps it).
    std::set<std::string> readFromFurtherOut;
    if (!rw.graphPath().empty())
        for (NodeId holder : g.nodesWithSubgraphs())
            for (const std::string& name : g.capturedNames(holder))
                if (!g.findValue(name)) readFromFurtherOut.insert(name);
    for (ValueId v : b.valueIds()) {
        const Value& val = b.value(v);
        if ((val.initializer || val.producer != kNone) && readFromFurtherOut.count(val.name))
            return "the branch defines '" + val.name + "', a name a subgraph here reads from further out";
    }
    bool topLevelOutput = false;
    for (ValueId o : n.outputs) topLevelOutput |= o != kNone && rw.graphPath().empty() && g.value(o).isGraphOutput;
    if (!order) return "the branch has a cycle";
    for (NodeId id : *order) {
        const Node& bn = b.node(id);
        if (bn.hasSubgraphs()) {
            if (topLevelOutput) return "the branch holds " + bn.displayName() + ", which has subgraphs, and the If computes a model output";
            for (const std::string& name : b.capturedNames(id)) {
                auto own = b.findValue(name);
                if (own && !b.value(*own).isOuterScope && g.findValue(name))
                    return "the subgraphs of " + bn.displayName() + " read '" + name + "', a name this graph already uses";
            }
        }
        for (ValueId v : bn.inputs)
            if (!defined(v)) return "the branch reads '" + b.value(v).name + "', which nothing defines";
        for (ValueId v : bn.outputs)
            if (v != kNone) made.insert(v);
    }
    for (ValueId v : b.outputs())
        if (v == kNone || !defined(v)) return v == kNone ? "the branch has an empty output" : "the branch returns '" + b.value(v).name + "', which nothing defines";
    for (ValueId o : n.outputs)
        if (o != kNone && rw.graphPath().empty() && g.value(o).isGraphOutput && rw.isCapturedBySubgraph(o))
            return "its output '" + g.value(o).name + "' is a model output read by a subgraph (its name could not be kept)";
    return {};
}

/// Moves the chosen branch of If `id` into the graph in its place; false (with a missed remark)
/// when it cannot.
bool inlineBranch(Rewriter& rw, NodeId id, bool cond) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const std::string branchName = cond ? "then_branch" : "else_branch";
    const Attribute* attr = n.attr(branchName);
    if (!attr || !attr->g) return false;  // malformed; import validation names it
    const std::shared_ptr<Graph> keep = attr->g;  // alive until the If is erased
    const Graph& b = *keep;
    const std::string ifName = n.displayName();
    const std::vector<ValueId> ifOuts = n.outputs;  // n is not read once the copy below edits the graph
    const std::optional<std::vector<NodeId>> order = b.topologicalOrder();
    if (std::string why = refusal(rw, n, b, order); !why.empty()) {
        rw.missed({id}, "not inlined: " + ifName + "'s condition is always " + (cond ? "true" : "false") + ", but " + why);
        return false;
    }
    const std::string reason = ifName + "'s condition is always " + (cond ? "true" : "false") + ": its " + branchName +
                               " (" + std::to_string(b.nodeCount()) + (b.nodeCount() == 1 ? " node" : " nodes") + ") takes its place";

    std::unordered_map<ValueId, ValueId> map;  // branch value -> value of this graph
    std::set<ValueId> fresh;                   // values made here, free to rename
    auto mapped = [&](ValueId bv) -> ValueId {
        if (bv == kNone) return kNone;
        if (auto it = map.find(bv); it != map.end()) return it->second;
        const Value& val = b.value(bv);
        ValueId pv = val.initializer ? rw.newInitializer(val.name, val.initializer) : rw.valueOrCapture(val.name);
        if (val.initializer) fresh.insert(pv);
        map.emplace(bv, pv);
        return pv;
    };
    for (NodeId bid : *order) {
        const Node& src = b.node(bid);
        std::vector<ValueId> ins, outs;
        for (ValueId v : src.inputs) ins.push_back(mapped(v));
        for (ValueId v : src.outputs) {
            if (v == kNone) { outs.push_back(kNone); continue; }
            ValueId pv = rw.newValue(b.value(v).name, b.value(v).type);
            map.emplace(v, pv);
            fresh.insert(pv);
            outs.push_back(pv);
        }
        rw.addNode(src.opType, std::move(ins), std::move(outs), src.attributes, {id}, reason,
                   src.name.empty() ? src.opType : src.name, src.domain);
    }

    // Readers of the If's outputs read the branch's; a graph output keeps its name (and gets a
    // value of its own when the branch returns an outside value or one value twice).
    std::vector<std::pair<ValueId, std::string>> keepNames;
    std::set<ValueId> used;
    for (size_t i = 0; i < ifOuts.size(); ++i) {
        const ValueId o = ifOuts[i];
        if (o == kNone) continue;
        ValueId m = mapped(b.outputs()[i]);
        const bool graphOutput = g.value(o).isGraphOutput;
        if (graphOutput && (!fresh.count(m) || used.count(m))) {
            ValueId copy = rw.newValue(g.value(o).name, g.value(m).type);
            rw.addNode("Identity", {m}, {copy}, {}, {id}, reason, ifName);
            fresh.insert(copy);
            m = copy;
        }
        used.insert(m);
        if (!g.value(m).type.known()) rw.setValueType(m, g.value(o).type);
        if (graphOutput && rw.graphPath().empty()) keepNames.emplace_back(m, g.value(o).name);
        rw.replaceAllUsesWith(o, m, reason);
    }
    rw.applied({id}, reason);
    rw.eraseNode(id, reason);
    for (const auto& [v, name] : keepNames) rw.renameValue(v, name);
    return true;
}

}  // namespace

size_t inlineIfsWithKnownCondition(Rewriter& rw) {
    const Graph& g = rw.graph();
    std::vector<NodeId> ifs;
    for (NodeId id : g.nodesWithSubgraphs())
        if (g.node(id).opType == "If" && match::inDefaultDomain(g.node(id))) ifs.push_back(id);
    size_t inlined = 0;
    rw.setRule("if-known-condition");
    for (NodeId id : ifs) {
        if (!g.hasNode(id)) continue;
        if (auto cond = knownCondition(g, g.node(id)); cond && inlineBranch(rw, id, *cond)) ++inlined;
    }
    if (inlined) rw.restoreTopologicalOrder();
    rw.setRule({});
    return inlined;
}

}  // namespace passlens::passes
