// fuse-reshape (level extended), as ONNX Runtime's ReshapeFusion: a Reshape whose target is
// computed at run time by a shape chain (Shape → Gather → Unsqueeze → Concat with constants, as
// PyTorch exports `x.view(x.size(0), x.size(1), 12, 64)`) gets a constant target instead:
//   - an entry that is dim j of the data itself (or a dim provably equal to it: same static size,
//     same dim_param name) at position j becomes 0 ("copy dim j"; only with allowzero = 0),
//   - an entry with a static size becomes that literal,
//   - at most one other entry becomes −1, only when every other dim is provably >= 1 (with a
//     0-sized dim, −1 cannot be inferred and the Reshape would fail where the model did not).
// Expand targets built the same way get 1 where the entry equals the aligned dim of the input
// (broadcasting keeps that dim). The chain's nodes that nothing else reads are removed here.
#include <algorithm>
#include <map>

#include "ir/IntsText.h"
#include "ir/Tensor.h"
#include "passes/ShapeChain.h"
#include "shape/DimExpr.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Erases the chain's nodes nothing reads any more (in reverse order: readers first) and the
/// constants only they read. Returns "Gather_3 (read by Div_7)" for every node that stays.
/// `captures`: whether the graph has subgraphs that could read a chain value by name.
std::string removeDeadChain(Rewriter& rw, std::vector<NodeId> chain, const std::string& why, bool captures) {
    const Graph& g = rw.graph();
    std::vector<ValueId> constants;
    for (bool progress = true; progress;) {
        progress = false;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            if (!g.hasNode(*it)) continue;
            const Node& n = g.node(*it);
            const bool dead = std::all_of(n.outputs.begin(), n.outputs.end(), [&](ValueId v) {
                return v == kNone || (g.value(v).consumers.empty() && !g.value(v).isGraphOutput && !(captures && rw.isCapturedBySubgraph(v)));
            });
            if (!dead) continue;
            for (ValueId v : n.inputs)
                if (v != kNone && g.value(v).initializer) constants.push_back(v);
            rw.eraseNode(*it, why);
            progress = true;
        }
    }
    removeUnreadConstants(rw, constants, why);
    std::string kept;
    for (NodeId id : chain) {
        if (!g.hasNode(id)) continue;
        std::string readers;
        for (ValueId v : g.node(id).outputs)
            if (v != kNone) readers += (readers.empty() ? "" : ", ") + readersOf(g, v);
        kept += (kept.empty() ? "" : "; ") + g.node(id).displayName() + " (read by " + readers + ")";
    }
    return kept;
}

/// The model's input dims by name: sizes of tensors it is fed, so >= 1 (shape::dimFromParam).
shape::SizeSymbols inputSizeSymbols(const Graph& top) {
    shape::SizeSymbols names;
    for (ValueId v : top.inputs())
        if (const auto& s = top.value(v).type.shape)
            for (const auto& d : s->dims)
                if (!d.param.empty()) names.insert(d.param);
    return names;
}

/// Whether `d` is >= 1 at every binding (a static size >= 1, or an expression over input dims
/// proven so); an unknown dim or a data-dependent name may be 0.
bool provablyPositive(const ir::Dim& d, const shape::SizeSymbols& sizes) {
    if (d.value) return *d.value >= 1;
    if (d.param.empty()) return false;
    auto lb = shape::dimFromParam(d.param, &sizes).lowerBound();
    return lb && *lb >= 1;
}

/// The constant Reshape target for `trace`, or a sentence saying why there is none.
std::optional<std::vector<int64_t>> reshapeTarget(const Graph& g, const Node& reshape, const ShapeTrace& trace,
                                                  const shape::SizeSymbols& sizes, std::string& why) {
    const ValueId data = reshape.inputs[0];
    const bool allowZero = reshape.attrInt("allowzero", 0) != 0;
    std::vector<int64_t> target;
    std::vector<std::string> inferred;
    std::optional<size_t> introduced;  ///< the entry this rewrite turns into −1
    for (size_t j = 0; j < trace.entries.size(); ++j) {
        const ShapeEntry& e = trace.entries[j];
        if (e.literal) {
            target.push_back(*e.literal);
            if (*e.literal == -1) inferred.push_back("the literal −1 at " + std::to_string(j));
            continue;
        }
        if (auto s = staticValueOf(g, e)) {
            target.push_back(*s);
            continue;
        }
        if (allowZero) {
            why = "allowzero=1, so 0 would mean a zero-size dim rather than \"copy\", and entry " + std::to_string(j) + " (" +
                  describeEntry(g, e) + ") has no static size";
            return std::nullopt;
        }
        if (provablyEqualDims(g, data, j, e.source, e.dim)) {
            target.push_back(0);
            continue;
        }
        target.push_back(-1);
        introduced = j;
        inferred.push_back("entry " + std::to_string(j) + " (" + describeEntry(g, e) + ")");
    }
    if (inferred.size() > 1) {
        why = "it would need more than one −1: " + inferred[0];
        for (size_t i = 1; i < inferred.size(); ++i) why += ", " + inferred[i];
        why += " are neither static nor provably equal to the data's dim at the same position";
        return std::nullopt;
    }
    if (introduced) {
        // −1 is inferred from the element count: with another dim 0 it cannot be, and the Reshape
        // fails at a binding where the computed target worked (a data-dependent size of 0).
        const auto& dataShape = g.value(data).type.shape;
        for (size_t k = 0; k < target.size(); ++k) {
            if (k == *introduced || target[k] >= 1) continue;
            const bool copiesPositive = target[k] == 0 && dataShape && k < dataShape->dims.size() && provablyPositive(dataShape->dims[k], sizes);
            if (copiesPositive) continue;
            why = "entry " + std::to_string(*introduced) + " (" + describeEntry(g, trace.entries[*introduced]) +
                  ") would need −1, which is exact only when every other dim is >= 1, and dim " + std::to_string(k) +
                  (target[k] == 0 ? " (a copy of the data's dim)" : "") + " may be 0";
            return std::nullopt;
        }
    }
    return target;
}

/// The constant Expand target: entries equal to the input's aligned dim become 1.
std::optional<std::vector<int64_t>> expandTarget(const Graph& g, const Node& expand, const ShapeTrace& trace, std::string& why) {
    const ValueId x = expand.inputs[0];
    auto rank = g.value(x).rank();
    std::vector<int64_t> target;
    const int64_t offset = (int64_t)trace.entries.size() - (rank ? (int64_t)*rank : 0);
    for (size_t j = 0; j < trace.entries.size(); ++j) {
        const ShapeEntry& e = trace.entries[j];
        if (auto s = staticValueOf(g, e)) {
            target.push_back(*s);
            continue;
        }
        const int64_t i = (int64_t)j - offset;
        if (rank && i >= 0 && provablyEqualDims(g, x, (size_t)i, e.source, e.dim)) {
            target.push_back(1);
            continue;
        }
        why = "entry " + std::to_string(j) + " (" + describeEntry(g, e) + ") is neither static nor provably equal to the aligned dim of '" +
              g.value(x).name + "'";
        return std::nullopt;
    }
    return target;
}

}  // namespace

namespace {

struct PendingMiss {
    std::string rule;
    std::vector<NodeId> nodes;
    std::string message;
    bool rankUnknown = false;  ///< may resolve once shape inference sees the targets made constant
};

/// One sweep over a graph's Reshapes and Expands; true when a target was made constant.
bool sweep(Rewriter& rw, std::map<std::string, ValueId>& madeTargets, std::vector<PendingMiss>& misses) {
    const Graph& g = rw.graph();
    const shape::SizeSymbols sizes = inputSizeSymbols(rw.model().graph);
    const bool captures = hasSubgraphNodes(g);  // asked once: it scans every node
    bool changed = false;
    const std::vector<NodeId> order = g.nodeOrder();
    for (NodeId id : order) {
        if (!g.hasNode(id)) continue;
        const Node& n = g.node(id);
        const bool reshape = isOp(n, "Reshape"), expand = isOp(n, "Expand");
        if ((!reshape && !expand) || n.inputs.size() < 2 || n.inputs[0] == kNone || n.inputs[1] == kNone) continue;
        const ValueId targetValue = n.inputs[1];
        if (constantOf(g, targetValue) || g.value(targetValue).producer == kNone) continue;
        rw.setRule(reshape ? "fuse-reshape" : "fuse-expand-shape");
        const std::string name = n.displayName();
        const ShapeTrace trace = traceShapeVector(g, targetValue);
        if (!trace.ok()) {
            std::vector<NodeId> involved{id};
            if (trace.blocker != kNone) involved.push_back(trace.blocker);
            misses.push_back({reshape ? "fuse-reshape" : "fuse-expand-shape", involved, name + "'s target not made constant: " + trace.why,
                              trace.why.find("rank is unknown") != std::string::npos});
            continue;
        }
        if (trace.scalar || trace.wholeShapeOf != kNone) continue;
        std::string why;
        auto target = reshape ? reshapeTarget(g, n, trace, sizes, why) : expandTarget(g, n, trace, why);
        if (!target) {
            misses.push_back({reshape ? "fuse-reshape" : "fuse-expand-shape", {id}, name + "'s target not made constant: " + why, false});
            continue;
        }
        const std::string text = intsText(*target);
        auto [made, fresh] = madeTargets.emplace(text, kNone);
        if (fresh) made->second = rw.newInitializer(name + "_shape", int64Tensor({(int64_t)target->size()}, *target));
        const ValueId c = made->second;
        const std::string reason = name + "'s target, computed by a " + std::to_string(trace.nodes.size()) +
                                   "-node shape chain, is the constant " + text;
        rw.setInput(id, 1, c, reason);
        const std::string kept = removeDeadChain(rw, trace.nodes, "only computed " + name + "'s target, now the constant " + text, captures);
        rw.applied({id}, reason + (kept.empty() ? "" : "; kept for other readers: " + kept));
        changed = true;
    }
    rw.setRule({});
    return changed;
}

}  // namespace

void FuseReshape::runImpl(PassContext& ctx) const {
    // A constant target gives the Reshape's result a known rank, which a later Reshape's chain
    // (Shape of that result) may need: after a sweep that changed something while a chain was
    // blocked by an unknown rank, shape inference runs and the graph is swept again.
    std::map<const Graph*, std::map<std::string, ValueId>> madeTargets;  // one initializer per distinct target and graph
    std::vector<std::pair<Rewriter*, PendingMiss>> misses;
    for (int round = 0; round < 4; ++round) {
        misses.clear();
        bool changed = false, rankBlocked = false;
        ctx.forEachGraph([&](Rewriter& rw) {
            std::vector<PendingMiss> graphMisses;
            changed |= sweep(rw, madeTargets[&rw.graph()], graphMisses);
            for (auto& m : graphMisses) {
                rankBlocked |= m.rankUnknown;
                misses.emplace_back(&rw, std::move(m));
            }
        });
        if (!changed || !rankBlocked) break;
        if (!ctx.inferShapes()) break;  // shapes stay as they were
    }
    for (auto& [rw, m] : misses) {
        rw->setRule(m.rule);
        rw->missed(m.nodes, m.message);
        rw->setRule({});
    }
}

std::unique_ptr<Pass> makeFuseReshapePass() { return std::make_unique<FuseReshape>(); }

}  // namespace passlens::passes
