// group-attention (level all): each scaled dot-product attention found by findAttentionForms
// (scale on the scores or on Q, additive mask or none, K transposed by a Transpose or already
// transposed) becomes ONE call of a model-local function `Attention` in passlens.fused, as
// group-gelu does for GELU: the model still runs anywhere, and a reader sees one attention kernel.
// The call's arguments are the values the pattern reads from outside (Q, K, V and a run-time
// mask); constants (the scale, a constant mask) move into the body. One function per distinct
// body, shared by every call.
#include <algorithm>
#include <map>
#include <set>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/GroupFunctions.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Why `form` cannot become one call, or empty: every intermediate must be read only inside it.
std::string refusal(const Graph& g, const AttentionForm& form, NodeId& blocker) {
    for (NodeId n : form.nodes)
        for (ValueId v : g.node(n).outputs)
            if (v != kNone && v != form.out && readOutside(g, v, form.nodes)) {
                blocker = n;
                return "'" + g.value(v).name + "' of " + g.node(n).displayName() + " has " + std::to_string(readerCount(g, v)) +
                       " readers (" + readersOf(g, v) + ")";
            }
    return {};
}

/// Values the nodes read that no node of the set produces and that are not constants, in first-read order.
std::vector<ValueId> formalInputs(const Graph& g, const std::vector<NodeId>& nodes) {
    std::set<ValueId> produced, seen;
    for (NodeId n : nodes)
        for (ValueId v : g.node(n).outputs) produced.insert(v);
    std::vector<ValueId> ins;
    for (NodeId n : nodes)
        for (ValueId v : g.node(n).inputs)
            if (v != kNone && !produced.count(v) && !constantOf(g, v) && seen.insert(v).second) ins.push_back(v);
    return ins;
}

}  // namespace

void GroupAttention::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule("group-attention");
        std::map<NodeId, size_t> position;
        if (auto order = g.topologicalOrder())
            for (NodeId n : *order) position.emplace(n, position.size());
        for (AttentionForm form : findAttentionForms(g)) {
            if (std::any_of(form.nodes.begin(), form.nodes.end(), [&](NodeId n) { return !g.hasNode(n); })) continue;
            const std::string at = "attention at " + g.node(form.softmax).displayName();
            if (!form.matched()) {
                std::vector<NodeId> involved = form.nodes;
                if (form.blocker != kNone) involved.push_back(form.blocker);
                rw.missed(involved, at + " not grouped into a function: " + form.why);
                continue;
            }
            NodeId blocker = kNone;
            if (std::string why = refusal(g, form, blocker); !why.empty()) {
                rw.missed(form.nodes, at + " not grouped into a function: " + why);
                continue;
            }
            std::sort(form.nodes.begin(), form.nodes.end(), [&](NodeId a, NodeId b) { return position[a] < position[b]; });
            std::vector<ValueId> constants;
            for (NodeId n : form.nodes)
                for (ValueId v : g.node(n).inputs)
                    if (v != kNone && constantOf(g, v)) constants.push_back(v);
            std::string members;
            for (NodeId n : form.nodes) members += (members.empty() ? "" : ", ") + g.node(n).displayName();
            const std::vector<ValueId> ins = formalInputs(g, form.nodes);
            auto body = functionBodyOf(g, form.nodes, ins, {form.out}, "Attention");
            // One body serves calls of every batch and sequence length: keep no shapes of the first call.
            for (ValueId v : body->valueIds()) body->value(v).type = TypeInfo{};
            const std::string fname = addOrReuseFunction(rw.model(), body, "Attention", form.text + " (first: " + members + ")");
            const size_t count = form.nodes.size();
            const NodeId call = rw.replaceNodes(form.nodes, fname, ins, {form.out}, {},
                                                at + ": " + std::to_string(count) + " nodes become one call of " + fname,
                                                fname + "_" + g.node(form.softmax).displayName(), kFusedFunctionDomain);
            rw.applied({call}, at + ": " + std::to_string(count) + " nodes (" + members + ") become one call " +
                                   g.node(call).displayName() + " of " + kFusedFunctionDomain + "." + fname + " with " +
                                   std::to_string(ins.size()) + " arguments");
            removeUnreadConstants(rw, constants, "read only by the nodes moved into " + fname);
        }
        rw.setRule({});
    });
}

}  // namespace passlens::passes
