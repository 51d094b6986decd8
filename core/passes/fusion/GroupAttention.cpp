// group-attention (level all): each scaled dot-product attention found by findAttentionForms
// (scale on the scores or on Q, additive mask or none, K transposed by a Transpose or already
// transposed) becomes ONE call of a model-local function `Attention` in passlens.fused, as
// group-gelu does for GELU: the model still runs anywhere, and a reader sees one attention kernel.
// The call's arguments are the values the pattern reads from outside (Q, K, V and a run-time
// mask); constants (the scale, a constant mask) move into the body. One function per distinct
// body, shared by every call. From opset 23 on, a form that fits the standard op's contract
// becomes one `Attention` node instead (scale as the attribute, the mask as attn_mask; 3-D
// inputs as one head of hidden size d), and one that does not says why before it is grouped.
#include <algorithm>
#include <numeric>
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

constexpr int64_t kAttentionOpset = 23;

/// The standard Attention-23 node for `form`: its inputs and attributes, or why it does not fit.
struct StandardAttention {
    std::vector<ValueId> inputs;
    std::vector<Attribute> attrs;
    /// The pattern's Transpose makes Kᵀ from K's producer in one step (PyTorch's seq-first
    /// MultiheadAttention writes perm [1, 2, 0]); Attention needs K itself, which is that input
    /// under this perm (the pattern's with its last two entries swapped). Empty: K is the input.
    std::vector<int64_t> kPerm;
    std::string why;
};

StandardAttention standardAttention(const Graph& g, const AttentionForm& form) {
    StandardAttention s;
    const int64_t rank = match::rankOf(g, form.q);
    if (rank != 3 && rank != 4) {
        s.why = "Q has " + (rank < 0 ? std::string("an unknown rank") : "rank " + std::to_string(rank)) +
                "; Attention takes 3-D or 4-D inputs";
        return s;
    }
    if (match::rankOf(g, form.k) != rank || match::rankOf(g, form.v) != rank) {
        s.why = "Q, K and V do not all have rank " + std::to_string(rank);
        return s;
    }
    const DataType type = g.value(form.q).type.elemType;
    if (type != DataType::Float && type != DataType::Float16) {
        s.why = "Q is " + std::string(dataTypeName(type)) + ", not float";
        return s;
    }
    double scale = 1.0;
    bool kTransposed = false;
    for (NodeId id : form.nodes) {
        const Node& n = g.node(id);
        if (isOp(n, "Transpose")) {
            std::vector<int64_t> perm = n.attrInts("perm");
            if (perm.size() != static_cast<size_t>(rank)) {
                s.why = "K's Transpose in " + n.displayName() + " has no perm of rank " + std::to_string(rank);
                return s;
            }
            std::swap(perm[static_cast<size_t>(rank - 1)], perm[static_cast<size_t>(rank - 2)]);
            std::vector<int64_t> identity(perm.size());
            std::iota(identity.begin(), identity.end(), 0);
            if (perm != identity) s.kPerm = perm;
            kTransposed = true;
        } else if ((isOp(n, "Mul") || isOp(n, "Div")) && n.inputs.size() == 2) {
            const double c = scalarOf(g, n.inputs[1]).value_or(0.0);
            if (c == 0.0) continue;
            scale *= isOp(n, "Mul") ? c : 1.0 / c;
        } else if (isOp(n, "Softmax")) {
            const int64_t axis = n.attrInt("axis", -1);
            if (axis != -1 && axis != rank - 1) {
                s.why = n.displayName() + " normalizes axis " + std::to_string(axis) + ", not the last";
                return s;
            }
        }
    }
    if (!kTransposed) {
        s.why = "K arrives already transposed (no Transpose in the pattern); Attention takes K untransposed";
        return s;
    }
    if (form.mask != kNone) {
        const DataType maskType = g.value(form.mask).type.elemType;
        if (maskType != type) {
            s.why = "the mask is " + std::string(dataTypeName(maskType)) + ", not the scores' type";
            return s;
        }
        const int64_t maskRank = match::rankOf(g, form.mask);
        if (maskRank < 0 || maskRank > rank) {
            s.why = "the mask's rank is unknown or above the scores'";
            return s;
        }
        // 3-D inputs become [batch, 1 head, seq, d] inside Attention: a mask with its own leading
        // (batch·heads) axis would broadcast against the head axis instead.
        if (rank == 3 && maskRank == 3) {
            const auto dims = g.value(form.mask).staticDims();
            if (!dims || dims->front() != 1) {
                s.why = "the 3-D mask has a batch·heads axis, which Attention's 3-D form cannot take";
                return s;
            }
        }
    }
    s.inputs = {form.q, form.k, form.v};
    if (form.mask != kNone) s.inputs.push_back(form.mask);
    s.attrs.push_back(Attribute::makeFloat("scale", static_cast<float>(scale)));
    if (rank == 3) {  // [batch·heads, seq, d]: one head whose hidden size is d
        s.attrs.push_back(Attribute::makeInt("q_num_heads", 1));
        s.attrs.push_back(Attribute::makeInt("kv_num_heads", 1));
    }
    return s;
}

}  // namespace

void GroupAttention::runImpl(PassContext& ctx) const {
    const bool standardOp = ctx.model().opsetFor("") >= kAttentionOpset;
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
            if (standardOp) {
                StandardAttention s = standardAttention(g, form);
                if (s.why.empty()) {
                    // K in the order Attention reads it, made by a Transpose placed before the node.
                    const std::string softmaxName = g.node(form.softmax).displayName();
                    ValueId kForAttention = kNone;
                    if (!s.kPerm.empty()) s.inputs[1] = kForAttention = rw.newValue(g.value(form.k).name + "_for_attention");
                    std::vector<ValueId> constants;  // the scale that moves into the attribute
                    for (NodeId n : form.nodes)
                        for (ValueId in : g.node(n).inputs)
                            if (in != kNone && constantOf(g, in) && in != form.mask) constants.push_back(in);
                    NodeId fused = rw.replaceNodes(form.nodes, "Attention", s.inputs, {form.out}, s.attrs,
                                                   at + ": " + form.text + " is one Attention (opset 23)",
                                                   softmaxName + ".attention");
                    if (kForAttention != kNone)
                        rw.addNode("Transpose", {form.k}, {kForAttention}, {Attribute::makeInts("perm", s.kPerm)}, {},
                                   at + ": K for Attention, from the layout Kᵀ was transposed out of",
                                   softmaxName + ".k");
                    rw.applied({fused}, at + ": " + std::to_string(form.nodes.size()) + " nodes fused into Attention");
                    removeUnreadConstants(rw, constants, "read only by the attention fused into Attention");
                    continue;
                }
                rw.missed(form.nodes, at + " is not the standard Attention op: " + s.why + "; grouped into a function instead");
            }
            const std::vector<ValueId> ins = formalInputs(g, form.nodes);
            replaceByFunctionCall(rw, form.nodes, ins, form.out, position, "Attention", form.text, at, form.softmax,
                                  " with " + std::to_string(ins.size()) + " arguments");
        }
        rw.setRule({});
    });
}

std::unique_ptr<Pass> makeGroupAttentionPass() { return std::make_unique<GroupAttention>(); }

}  // namespace passlens::passes
