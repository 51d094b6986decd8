// gather-permuted-vector (shape-chain-folding): see SymbolicRewrites.h.
#include <set>

#include "ir/IntsText.h"
#include "ir/Tensor.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// The known elements of a small 1-D integer value ({} when one is unknown or it is not 1-D).
std::vector<shape::DimExpr> elementsOf(const Graph& g, const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size()) return {};
    const shape::ValueShape& s = a.of(v);
    if (!s.values || !s.dims || s.dims->size() != 1 || s.dtype != DataType::Int64 || g.value(v).type.elemType != DataType::Int64)
        return {};
    std::vector<shape::DimExpr> out;
    for (const shape::Dim& e : *s.values) {
        if (!e) return {};
        out.push_back(*e);
    }
    return out;
}

bool isConstantValue(const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size() || !a.of(v).values) return false;
    for (const shape::Dim& e : *a.of(v).values)
        if (!e || !e->isConstant()) return false;
    return true;
}

/// The one input of `n` its result's elements come from, when `n` only moves, repeats or drops
/// elements of it (the other inputs, if any, being constants): kNone otherwise.
ValueId movedFrom(const shape::ShapeAnalysis& a, const Node& n) {
    static const std::set<std::string> kMovers{"Reshape", "Slice", "Transpose", "Squeeze", "Unsqueeze",
                                               "Flatten", "Identity", "Cast", "Concat", "Gather"};
    if (!(n.domain.empty() || n.domain == "ai.onnx") || !kMovers.count(n.opType) || n.outputs.size() != 1 || n.inputs.empty())
        return kNone;
    if (n.opType == "Cast" && n.attrInt("to", 0) != int64_t(DataType::Int64)) return kNone;
    if (n.opType != "Concat") return n.inputs[0];
    ValueId only = kNone;
    for (ValueId in : n.inputs) {
        if (isConstantValue(a, in)) continue;
        if (only != kNone) return kNone;
        only = in;
    }
    return only;
}

}  // namespace

void gatherPermutedVectors(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures) {
    const Graph& g = rw.graph();
    bool added = false;
    const std::vector<NodeId> order = g.nodeOrder();
    // Last to first: a vector read by a long chain is rewritten once, from its end.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const NodeId id = *it;
        if (!g.hasNode(id)) continue;
        const Node& n = g.node(id);
        if (n.outputs.size() != 1 || n.outputs[0] == kNone || movedFrom(a, n) == kNone) continue;
        const ValueId out = n.outputs[0];
        if (g.value(out).consumers.empty() && !g.value(out).isGraphOutput) continue;  // dead: an earlier rewrite's chain
        const std::vector<shape::DimExpr> want = elementsOf(g, a, out);
        if (want.empty() || want.size() > 64 || isConstantValue(a, out)) continue;
        if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) continue;
        // Walk back while each node only moves elements and nothing else reads what it reads.
        std::vector<NodeId> chain;
        ValueId best = kNone;
        std::vector<int64_t> bestIndices;
        size_t bestLength = 0;
        for (NodeId cur = id; cur != kNone;) {
            const Node& c = g.node(cur);
            const ValueId src = movedFrom(a, c);
            if (src == kNone) break;
            chain.push_back(cur);
            const std::vector<shape::DimExpr> have = elementsOf(g, a, src);
            if (!have.empty()) {
                std::vector<int64_t> indices;
                for (const shape::DimExpr& e : want) {
                    size_t k = 0;
                    while (k < have.size() && have[k] != e) ++k;
                    if (k == have.size()) break;
                    indices.push_back((int64_t)k);
                }
                if (indices.size() == want.size()) {
                    best = src;
                    bestIndices = indices;
                    bestLength = chain.size();
                }
            }
            const Value& sv = g.value(src);
            if (sv.consumers.size() != 1 || sv.isGraphOutput || sv.producer == kNone || (captures && rw.isCapturedBySubgraph(src)))
                break;
            cur = sv.producer;
        }
        // One Gather replaces the chain: worth it when two nodes or more go.
        if (best == kNone || bestLength < 2) continue;
        rw.setRule("gather-permuted-vector");
        const std::string name = n.displayName();
        const std::string why = name + " only rearranges the elements of '" + g.value(best).name + "' (" +
                                std::to_string(bestLength) + " nodes): one Gather at " + intsText(bestIndices);
        const ValueId indices = rw.newInitializer(g.value(out).name + "_indices", int64Tensor({(int64_t)bestIndices.size()}, bestIndices));
        const NodeId gather = rw.replaceNodes({id}, "Gather", {best, indices}, {out}, {Attribute::makeInt("axis", 0)}, why, name);
        rw.applied({gather}, why + "; the rest of the chain is dead code");
        added = true;
    }
    if (added) rw.restoreTopologicalOrder();
}

}  // namespace passlens::passes
