// Unsqueeze(Unsqueeze(x, A1), A2) = Unsqueeze(x, A): the second call's new axes A2 index the
// result; the first call's A1 index the middle value, whose dims fill the result's other
// positions in order, so A = A2 plus the positions the A1 dims land on.
// ([nW, 16, 16] unsqueezed at 1 then 0 is one Unsqueeze at [0, 2].)
#include <algorithm>
#include <set>

#include "ir/Tensor.h"
#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

bool mergeUnsqueezes(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& outer = g.node(id);
    if (outer.opType != "Unsqueeze" || !outer.domain.empty() || outer.outputs.size() != 1) return false;
    const ValueId mid = outer.inputs[0];
    const NodeId innerId = g.value(mid).producer;
    if (innerId == kNone || g.node(innerId).opType != "Unsqueeze" || !g.node(innerId).domain.empty() ||
        !match::hasSingleReader(g, mid))
        return false;
    const Node& inner = g.node(innerId);
    auto outerAxes = intsFromAttrOrInput(g, outer, "axes", 1), innerAxes = intsFromAttrOrInput(g, inner, "axes", 1);
    if (!outerAxes || !innerAxes || inner.inputs.empty() || inner.inputs[0] == kNone) return false;
    const ValueId x = inner.inputs[0];
    const auto rank = g.value(x).rank();
    const int64_t midRank = rank ? (int64_t)(*rank + innerAxes->size()) : -1;
    const int64_t outRank = rank ? (int64_t)(*rank + innerAxes->size() + outerAxes->size()) : -1;
    auto first = normalizedAxisSet(*innerAxes, midRank), second = normalizedAxisSet(*outerAxes, outRank);
    if (!first || !second) return false;
    // The result's positions that are not new in the second call hold the middle value's dims in
    // order: the k-th of them is middle dim k.
    std::vector<int64_t> axes(second->begin(), second->end());
    const int64_t last = first->empty() ? -1 : *first->rbegin();
    for (int64_t pos = 0, k = 0; k <= last; ++pos) {
        if (second->count(pos)) continue;
        if (first->count(k)) axes.push_back(pos);
        ++k;
    }
    std::sort(axes.begin(), axes.end());
    const std::string name = outer.displayName(), innerName = inner.displayName();
    const std::string why = innerName + " and " + name + " insert axes one after the other: one Unsqueeze inserts them all";
    rw.setRule("unsqueeze-unsqueeze");
    std::vector<ValueId> inputs{x};
    std::vector<Attribute> attrs;
    const ValueId out = outer.outputs[0];  // outer is not read after the first edit
    if (outer.attr("axes")) {
        attrs.push_back(Attribute::makeInts("axes", axes));
    } else {
        inputs.push_back(rw.newInitializer(name + "_axes", makeTensorOf<int64_t>(DataType::Int64, {(int64_t)axes.size()}, axes)));
    }
    const NodeId merged = rw.replaceNodes({innerId, id}, "Unsqueeze", inputs, {out}, attrs, why, name);
    rw.applied({merged}, why);
    revisit.push_back(merged);
    return true;
}

}  // namespace passlens::passes::algebraic
