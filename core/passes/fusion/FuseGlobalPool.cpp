// ReduceMean over every spatial axis of an N×C×spatial tensor → GlobalAveragePool, in one
// ReduceMean or two chained ones over disjoint axes (a mean of means over equal-sized groups is
// the mean). keepdims must be 1 (GlobalAveragePool keeps the spatial dims as 1s).
#include <algorithm>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Axes of a ReduceMean normalized to [0, rank), from the attribute or (opset 18) a constant
/// input; nullopt for computed or absent axes.
std::optional<std::set<int64_t>> axesOf(const Graph& g, const Node& n, size_t rank) {
    auto a = algebraic::intsFromAttrOrInput(g, n, "axes", 1);
    if (!a || a->empty()) return std::nullopt;
    std::set<int64_t> out;
    for (int64_t x : *a) out.insert(x < 0 ? x + int64_t(rank) : x);
    return out;
}

}  // namespace

void FuseGlobalPool::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("global-average-pool");
        for (NodeId id : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(id) || !isOp(g.node(id), "ReduceMean")) continue;
            const Node& r1 = g.node(id);
            // Start only at the first ReduceMean of a chain.
            if (producerOf(g, r1.inputs[0], "ReduceMean") != kNone) continue;
            auto rank = g.value(r1.inputs[0]).rank();
            if (!rank || *rank < 3 || g.value(r1.inputs[0]).type.elemType != DataType::Float) continue;
            std::set<int64_t> spatial;
            for (int64_t a = 2; a < int64_t(*rank); ++a) spatial.insert(a);
            auto a1 = axesOf(g, r1, *rank);
            if (!a1 || !std::includes(spatial.begin(), spatial.end(), a1->begin(), a1->end())) continue;
            std::vector<NodeId> group{id};
            std::set<int64_t> covered = *a1;
            ValueId out = r1.outputs[0];
            if (covered != spatial) {
                if (readerCount(g, out) != 1) continue;
                NodeId id2 = g.value(out).consumers[0];
                if (!isOp(g.node(id2), "ReduceMean")) continue;
                auto a2 = axesOf(g, g.node(id2), *rank);
                if (!a2) continue;
                for (int64_t a : *a2) covered.insert(a);
                if (covered != spatial || a2->size() + a1->size() != spatial.size()) continue;
                group.push_back(id2);
                out = g.node(id2).outputs[0];
            }
            const std::string where = "mean over the spatial axes at " + r1.displayName();
            bool keeps = true;
            for (NodeId n : group) keeps &= g.node(n).attrInt("keepdims", 1) == 1;
            if (!keeps) {
                rw.missed(group, where + " not fused: keepdims=0 drops the spatial axes GlobalAveragePool keeps");
                continue;
            }
            NodeId fused = rw.replaceNodes(group, "GlobalAveragePool", {r1.inputs[0]}, {out}, {},
                                           where + ": the mean over every spatial axis is GlobalAveragePool",
                                           r1.displayName() + ".gap");
            rw.applied({fused}, where + ": " + std::to_string(group.size()) + " ReduceMean fused into GlobalAveragePool");
        }
    });
}

std::unique_ptr<Pass> makeFuseGlobalPoolPass() { return std::make_unique<FuseGlobalPool>(); }

}  // namespace passlens::passes
