// group-gelu / group-silu (level all): each GELU or x·Sigmoid(k·x) form found by fuse-gelu /
// fuse-silu becomes ONE call of a model-local function in passlens.fused. No standard op up to
// opset 17 computes them, so a function keeps the model runnable anywhere while a reader (and a
// later fusion grouping) sees one activation kernel. One function per distinct form and
// constants, shared by every call.
#include <algorithm>
#include <map>
#include <set>

#include "passes/fusion/FunctionCall.h"
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
        const Graph& g = rw.graph();
        rw.setRule(rule);
        const auto position = topologicalPositions(g);
        std::set<NodeId> taken;  // nodes already moved into a call (forms may overlap)
        for (const ActivationForm& form : find(g)) {
            if (std::any_of(form.nodes.begin(), form.nodes.end(), [&](NodeId n) { return taken.count(n) || !g.hasNode(n); }))
                continue;
            const std::string at = form.form + " at " + g.node(form.anchor).displayName();
            if (std::string why = refusal(g, form); !why.empty()) {
                rw.missed(form.nodes, at + " not grouped into a function: " + why);
                continue;
            }
            taken.insert(form.nodes.begin(), form.nodes.end());
            replaceByFunctionCall(rw, form.nodes, {form.x}, form.out, position, form.function, form.form, at, form.anchor);
        }
    });
}

}  // namespace

void GroupGelu::runImpl(PassContext& ctx) const { groupForms(ctx, "group-gelu", &findGeluForms); }

void GroupSilu::runImpl(PassContext& ctx) const { groupForms(ctx, "group-silu", &findSiluForms); }

std::unique_ptr<Pass> makeGroupGeluPass() { return std::make_unique<GroupGelu>(); }

std::unique_ptr<Pass> makeGroupSiluPass() { return std::make_unique<GroupSilu>(); }

}  // namespace passlens::passes
