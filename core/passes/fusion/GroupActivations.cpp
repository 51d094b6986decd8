// group-gelu / group-silu (level all): each GELU or x·Sigmoid(k·x) form found by fuse-gelu /
// fuse-silu becomes ONE call of a model-local function in passlens.fused. No standard op up to
// opset 17 computes them, so a function keeps the model runnable anywhere while a reader (and a
// later fusion grouping) sees one activation kernel. One function per distinct form and
// constants, shared by every call.
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

/// Why `form` cannot become one call, or empty: every intermediate must be read only inside the
/// form, and every value it reads must be x, a constant or one of its own results.
std::string refusal(const Graph& g, const ActivationForm& form) {
    std::set<ValueId> produced;
    for (NodeId n : form.nodes)
        for (ValueId v : g.node(n).outputs) produced.insert(v);
    if (form.out == kNone || !produced.count(form.out)) return "its result is not produced inside the form";
    for (NodeId n : form.nodes) {
        for (ValueId v : g.node(n).inputs)
            if (v != kNone && v != form.x && !produced.count(v) && !constantOf(g, v))
                return "it reads '" + g.value(v).name + "' from outside the form";
        for (ValueId v : g.node(n).outputs)
            if (v != kNone && v != form.out && readOutside(g, v, form.nodes))
                return "'" + g.value(v).name + "' has " + std::to_string(readerCount(g, v)) + " readers (" + readersOf(g, v) + ")";
    }
    return {};
}

void groupForms(PassContext& ctx, const std::string& rule, std::vector<ActivationForm> (*find)(const Graph&)) {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule(rule);
        std::map<NodeId, size_t> position;
        if (auto order = g.topologicalOrder())
            for (NodeId n : *order) position.emplace(n, position.size());
        std::set<NodeId> taken;  // nodes already moved into a call (forms may overlap)
        for (ActivationForm form : find(g)) {
            if (std::any_of(form.nodes.begin(), form.nodes.end(), [&](NodeId n) { return taken.count(n) || !g.hasNode(n); }))
                continue;
            const std::string at = form.form + " at " + g.node(form.anchor).displayName();
            if (std::string why = refusal(g, form); !why.empty()) {
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
            auto body = functionBodyOf(g, form.nodes, {form.x}, {form.out}, form.function);
            // One body serves calls of every shape: keep no shapes of the first call's values.
            for (ValueId v : body->valueIds()) body->value(v).type = TypeInfo{};
            const std::string fname = addOrReuseFunction(rw.model(), body, form.function, form.form + " (first: " + members + ")");
            taken.insert(form.nodes.begin(), form.nodes.end());
            const size_t count = form.nodes.size();
            const NodeId call = rw.replaceNodes(form.nodes, fname, {form.x}, {form.out}, {},
                                                at + ": " + std::to_string(count) + " nodes become one call of " + fname,
                                                fname + "_" + g.node(form.anchor).displayName(), kFusedFunctionDomain);
            rw.applied({call}, at + ": " + std::to_string(count) + " nodes (" + members + ") become one call " +
                                   g.node(call).displayName() + " of " + kFusedFunctionDomain + "." + fname);
            removeUnreadConstants(rw, constants, "read only by the nodes moved into " + fname);
        }
    });
}

}  // namespace

void GroupGelu::runImpl(PassContext& ctx) const { groupForms(ctx, "group-gelu", &findGeluForms); }

void GroupSilu::runImpl(PassContext& ctx) const { groupForms(ctx, "group-silu", &findSiluForms); }

}  // namespace passlens::passes
