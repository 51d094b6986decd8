// group-attention (level all): each scaled dot-product attention found by findAttentionForms
// (scale on the scores or on Q, additive mask or none, K transposed by a Transpose or already
// transposed) becomes ONE call of a model-local function `Attention` in passlens.fused, as
// group-gelu does for GELU: the model still runs anywhere, and a reader sees one attention kernel.
// The call's arguments are the values the pattern reads from outside (Q, K, V and a run-time
// mask); constants (the scale, a constant mask) move into the body. One function per distinct
// body, shared by every call.
#include <algorithm>
#include <set>

#include "passes/ShapeChain.h"
#include "passes/fusion/FunctionCall.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/GroupFunctions.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Why `form` cannot become one call, or empty: every intermediate must be read only inside it.
/// `captures`: the graph has subgraphs (only then can a capture read an intermediate by name).
std::string refusal(const Graph& g, const AttentionForm& form, bool captures) {
    auto readElsewhere = [&](ValueId v) {
        const Value& val = g.value(v);
        if (val.isGraphOutput) return true;
        for (NodeId c : val.consumers)
            if (std::find(form.nodes.begin(), form.nodes.end(), c) == form.nodes.end()) return true;
        return captures && !subgraphReaders(g, v).empty();
    };
    for (NodeId n : form.nodes)
        for (ValueId v : g.node(n).outputs)
            if (v != kNone && v != form.out && readElsewhere(v))
                return "'" + g.value(v).name + "' of " + g.node(n).displayName() + " has " + std::to_string(readerCount(g, v)) +
                       " readers (" + readersOf(g, v) + ")";
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
        const Graph& g = rw.graph();
        rw.setRule("group-attention");
        const auto position = topologicalPositions(g);
        const bool captures = hasSubgraphNodes(g);  // asked once: it scans every node
        for (const AttentionForm& form : findAttentionForms(g)) {
            if (std::any_of(form.nodes.begin(), form.nodes.end(), [&](NodeId n) { return !g.hasNode(n); })) continue;
            const std::string at = "attention at " + g.node(form.softmax).displayName();
            if (!form.matched()) {
                std::vector<NodeId> involved = form.nodes;
                if (form.blocker != kNone) involved.push_back(form.blocker);
                rw.missed(involved, at + " not grouped into a function: " + form.why);
                continue;
            }
            if (std::string why = refusal(g, form, captures); !why.empty()) {
                rw.missed(form.nodes, at + " not grouped into a function: " + why);
                continue;
            }
            const std::vector<ValueId> ins = formalInputs(g, form.nodes);
            replaceByFunctionCall(rw, form.nodes, ins, form.out, position, "Attention", form.text, at, form.softmax,
                                  " with " + std::to_string(ins.size()) + " arguments");
        }
        rw.setRule({});
    });
}

void registerGroupAttentionPass(PassRegistry& reg) {
    reg.add<GroupAttention>(Level::All, 277);
}

}  // namespace passlens::passes
