// Shape-only rules: Reshape∘Reshape merged, Squeeze/Unsqueeze pairs on the same axes cancelled,
// no-op Slice / Pad / Expand removed, Gather of a Range as a Slice, the complement of a triangle
// of ones as the other triangle. All of them move or select data only, so a rewrite is exact.
#include <algorithm>
#include <limits>
#include <set>

#include "ir/IntsText.h"
#include "passes/algebraic/Rules.h"
#include "passes/ShapeChain.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// Reshape(Reshape(x, s1), s2) = Reshape(x, s2'), where s2' spells out the 0 ("copy this dim")
/// entries of s2, which refer to the intermediate's dims, not x's.
bool mergeReshapes(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const ValueId mid = n.inputs[0];
    const NodeId innerId = g.value(mid).producer;
    if (innerId == kNone || g.node(innerId).opType != "Reshape" || !g.node(innerId).domain.empty()) return false;
    const Node& inner = g.node(innerId);
    rw.setRule("reshape-reshape");
    const std::string name = n.displayName(), innerName = inner.displayName();
    auto target = constantInts(g, n.inputs[1]);
    if (!target) {
        rw.missed({id, innerId}, "not merged: the target shape of " + name + " is not a constant", {n.inputs[1]});
        return true;
    }
    if (!match::hasSingleReader(rw.graph(), mid)) {
        rw.missed({id, innerId}, "not merged: " + innerName + "'s result has other readers", {mid});
        return true;
    }
    auto innerTarget = constantInts(g, inner.inputs.size() > 1 ? inner.inputs[1] : kNone);
    if (inner.attrInt("allowzero", 0) != 0 &&
        (!innerTarget || std::find(innerTarget->begin(), innerTarget->end(), 0) != innerTarget->end())) {
        rw.missed({id, innerId}, "not merged: " + innerName + " may produce an empty tensor (allowzero with a 0 entry)");
        return true;
    }
    std::vector<int64_t> merged = *target;
    if (n.attrInt("allowzero", 0) == 0 && std::find(merged.begin(), merged.end(), 0) != merged.end()) {
        auto midDims = g.value(mid).staticDims();
        for (size_t i = 0; i < merged.size(); ++i) {
            if (merged[i] != 0) continue;
            if (!midDims || i >= midDims->size() || (*midDims)[i] == 0) {
                rw.missed({id, innerId}, "not merged: entry " + std::to_string(i) + " of " + name +
                          "'s target shape copies a dim of " + innerName + "'s result, whose size is unknown or zero");
                return true;
            }
            merged[i] = (*midDims)[i];
        }
    }
    ValueId shape = n.inputs[1];
    const ValueId x = inner.inputs[0], out = n.outputs[0];  // read before the first edit
    std::vector<Attribute> attrs = n.attributes;
    if (merged != *target)
        shape = rw.newInitializer(g.value(shape).name + "_resolved",
                                  makeTensorOf<int64_t>(DataType::Int64, {(int64_t)merged.size()}, merged));
    const NodeId merged_ = rw.replaceNodes({innerId, id}, "Reshape", {x, shape}, {out}, attrs,
                                           innerName + " and " + name + " merged: only the last target shape matters", name);
    rw.applied({merged_}, innerName + " and " + name + " merged into one Reshape to " + intsText(merged));
    revisit.push_back(merged_);
    return true;
}

/// Unsqueeze(Squeeze(x, A), A) = x and Squeeze(Unsqueeze(x, A), A) = x.
bool cancelSqueezePair(Rewriter& rw, NodeId id) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const ValueId mid = n.inputs[0];
    const NodeId innerId = g.value(mid).producer;
    const std::string other = n.opType == "Squeeze" ? "Unsqueeze" : "Squeeze";
    if (innerId == kNone || g.node(innerId).opType != other || !g.node(innerId).domain.empty()) return false;
    const Node& inner = g.node(innerId);
    const std::string rule = n.opType == "Squeeze" ? "squeeze-unsqueeze" : "unsqueeze-squeeze";
    rw.setRule(rule);
    bool outerHas = false, innerHas = false;
    auto outerAxes = intsFromAttrOrInput(g, n, "axes", 1, &outerHas);
    auto innerAxes = intsFromAttrOrInput(g, inner, "axes", 1, &innerHas);
    const Node& squeeze = n.opType == "Squeeze" ? n : inner;
    if ((n.opType == "Squeeze" ? !outerHas : !innerHas)) {
        rw.missed({id, innerId}, "not cancelled: " + squeeze.displayName() + " has no axes (it drops every 1-dim)");
        return true;
    }
    if (!outerAxes || !innerAxes) {
        rw.missed({id, innerId}, "not cancelled: the axes are not constant");
        return true;
    }
    // Both lists index the higher-rank tensor: x for Unsqueeze∘Squeeze, the middle value otherwise.
    auto rank = g.value(n.opType == "Squeeze" ? mid : inner.inputs[0]).rank();
    auto normalize = [&](std::vector<int64_t> axes) -> std::optional<std::set<int64_t>> {
        std::set<int64_t> s;
        for (int64_t a : axes) {
            if (a < 0) {
                if (!rank) return std::nullopt;
                a += (int64_t)*rank;
            }
            s.insert(a);
        }
        return s;
    };
    auto a = normalize(*outerAxes), b = normalize(*innerAxes);
    if (!a || !b) {
        rw.missed({id, innerId}, "not cancelled: negative axes and the rank is unknown");
        return true;
    }
    if (*a != *b) {
        rw.missed({id, innerId}, "not cancelled: " + inner.displayName() + " and " + n.displayName() + " use different axes (" +
                  intsText(*innerAxes) + " vs " + intsText(*outerAxes) + ")");
        return true;
    }
    cancelPair(rw, id, innerId, inner.inputs[0], rule,
               n.opType + "(" + other + "(x, axes), axes) = x");
    return true;
}

/// Slice that keeps every element: starts 0, ends ≥ dim, steps 1 on a static shape.
bool sliceIsNoOp(const Graph& g, const Node& n) {
    auto dims = g.value(n.inputs[0]).staticDims();
    if (!dims) return false;
    bool hasStarts = false, hasEnds = false, hasAxes = false;
    auto starts = intsFromAttrOrInput(g, n, "starts", 1, &hasStarts);
    auto ends = intsFromAttrOrInput(g, n, "ends", 2, &hasEnds);
    auto axes = intsFromAttrOrInput(g, n, "axes", 3, &hasAxes);
    if (!starts || !ends || starts->size() != ends->size() || (hasAxes && (!axes || axes->size() != starts->size())))
        return false;
    std::vector<int64_t> steps(starts->size(), 1);
    if (n.inputs.size() > 4 && n.inputs[4] != kNone) {
        auto s = constantInts(g, n.inputs[4]);
        if (!s || s->size() != starts->size()) return false;
        steps = *s;
    }
    const int64_t rank = (int64_t)dims->size();
    for (size_t i = 0; i < starts->size(); ++i) {
        int64_t axis = hasAxes ? (*axes)[i] : (int64_t)i;
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank || steps[i] != 1) return false;
        const int64_t dim = (*dims)[(size_t)axis];
        int64_t s = (*starts)[i], e = (*ends)[i];
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        s = std::clamp<int64_t>(s, 0, dim);
        e = std::clamp<int64_t>(e, 0, dim);
        if (s != 0 || e != dim) return false;
    }
    return true;
}

bool padIsNoOp(const Graph& g, const Node& n) {
    auto pads = intsFromAttrOrInput(g, n, "pads", 1);
    if (!pads) {
        if (const Attribute* a = n.attr("paddings")) pads = a->ints;  // opset 1
        else return false;
    }
    return std::all_of(pads->begin(), pads->end(), [](int64_t p) { return p == 0; });
}

bool expandIsNoOp(const Graph& g, const Node& n) {
    auto shape = constantInts(g, n.inputs.size() > 1 ? n.inputs[1] : kNone);
    if (!shape) return false;
    const Value& x = g.value(n.inputs[0]);
    // All-ones target of no higher rank never changes anything, whatever the dims are.
    auto rank = x.rank();
    if (rank && shape->size() <= *rank && std::all_of(shape->begin(), shape->end(), [](int64_t d) { return d == 1; }))
        return true;
    auto dims = x.staticDims();
    if (!dims) return false;
    auto b = broadcastDims(*dims, *shape);
    return b && *b == *dims;
}

/// A scalar that is one dim of a tensor (a shape chain's single entry, or a non-negative
/// literal): never negative, which the Gather(Range) rule below needs.
bool isDimSize(const Graph& g, ValueId v) {
    const ShapeTrace t = traceShapeVector(g, v);
    if (!t.ok() || !t.scalar || t.entries.size() != 1) return false;
    return t.entries[0].source != kNone || t.entries[0].literal.value_or(-1) >= 0;
}

/// Gather(data, Range(start, n, step), axis) = Slice(data, [start], [n], [axis], [step]) when start
/// >= 0 and step >= 1 are constants and n is a dim size: the indices are exactly the rows the Slice
/// keeps (torch's positions = arange(seq) then an embedding lookup).
bool gatherOfRangeToSlice(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.inputs.size() < 2) return false;
    const NodeId rangeId = g.value(n.inputs[1]).producer;
    if (rangeId == kNone || g.node(rangeId).opType != "Range" || !g.node(rangeId).domain.empty()) return false;
    const Node& range = g.node(rangeId);
    const DataType t = g.value(range.outputs[0]).type.elemType;
    if (t != DataType::Int64 && t != DataType::Int32) return false;
    rw.setRule("gather-range-slice");
    auto start = constantInts(g, range.inputs[0]), step = constantInts(g, range.inputs[2]);
    if (!start || !step || start->size() != 1 || step->size() != 1 || (*start)[0] < 0 || (*step)[0] < 1) {
        rw.missed({id, rangeId}, "not a Slice: the Range's start and step must be constants with start >= 0 and step >= 1");
        return true;
    }
    if (!isDimSize(g, range.inputs[1])) {
        rw.missed({id, rangeId}, "not a Slice: the Range's limit is not a dim size read from a Shape, so it may be negative",
                  {range.inputs[1]});
        return true;
    }
    const int64_t opset = pattern::defaultOpset(rw.model());
    // Read everything now: adding nodes below may move the node storage `n` and `range` point into.
    const ValueId limit = range.inputs[1], data = n.inputs[0], out = n.outputs[0], rangeOut = range.outputs[0];
    const int64_t axis = n.attrInt("axis", 0);
    const std::string name = n.displayName(), rangeName = range.displayName(), limitName = g.value(limit).name;
    // The limit as a 1-D tensor: reuse an Unsqueeze of it on axis 0 when the exporter made one.
    ValueId ends = kNone;
    for (NodeId r : g.value(limit).consumers) {
        const Node& u = g.node(r);
        if (u.opType != "Unsqueeze" || !u.domain.empty() || u.inputs[0] != limit) continue;
        if (intsFromAttrOrInput(g, u, "axes", 1) == std::vector<int64_t>{0}) ends = u.outputs[0];
    }
    if (ends == kNone) {
        ends = rw.newValue(limitName + "_1d");
        if (opset >= 13)
            rw.addNode("Unsqueeze", {limit, rw.newInitializer("axes0", makeTensorOf<int64_t>(DataType::Int64, {1}, {0}))}, {ends}, {}, {},
                       "the Range's limit as a Slice end");
        else
            rw.addNode("Unsqueeze", {limit}, {ends}, {Attribute::makeInts("axes", {0})}, {}, "the Range's limit as a Slice end");
    }
    auto ints = [&](const char* hint, int64_t v) { return rw.newInitializer(hint, makeTensorOf<int64_t>(DataType::Int64, {1}, {v})); };
    std::vector<ValueId> inputs = {data, ints("starts", (*start)[0]), ends, ints("axes", axis)};
    if ((*step)[0] != 1) inputs.push_back(ints("steps", (*step)[0]));
    const NodeId slice = rw.replaceNodes({id}, "Slice", inputs, {out}, {},
                                         name + " gathers rows start, start+step, ... below a dim size: a Slice", name);
    rw.applied({slice}, name + " of " + rangeName + " became a Slice of rows [" + std::to_string((*start)[0]) + ", " + limitName +
                            ") step " + std::to_string((*step)[0]));
    if (g.value(rangeOut).consumers.empty() && !g.value(rangeOut).isGraphOutput) rw.eraseNode(rangeId, "its Gather became a Slice");
    // The Slice stands where the Gather stood; the Unsqueeze it reads may come later in the list.
    rw.restoreTopologicalOrder();
    revisit.push_back(slice);
    return true;
}

/// Not(Trilu(ones, k, upper)) = Trilu(ones, k + 1, lower→upper) or (k - 1, upper→lower): the
/// complement of a triangle of ones is the other triangle, shifted by one diagonal (a causal
/// mask built as ~tril(ones(seq, seq))).
bool notOfTriangleOfOnes(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const NodeId triluId = g.value(n.inputs[0]).producer;
    if (triluId == kNone || g.node(triluId).opType != "Trilu" || !g.node(triluId).domain.empty()) return false;
    const Node& trilu = g.node(triluId);
    const NodeId fillId = g.value(trilu.inputs[0]).producer;
    rw.setRule("not-triangle");
    bool ones = false;
    if (fillId != kNone && g.node(fillId).opType == "ConstantOfShape" && g.node(fillId).domain.empty()) {
        const Attribute* value = g.node(fillId).attr("value");
        ones = value && value->t && value->t->dtype == DataType::Bool && value->t->elementCount() == 1 && value->t->data.size() == 1 && value->t->data.data()[0] != std::byte{0};
    }
    if (!ones) return false;  // a triangle of data: its complement is no triangle
    if (g.value(n.inputs[0]).consumers.size() != 1 || g.value(n.inputs[0]).isGraphOutput) {
        rw.missed({id, triluId}, "not merged: " + trilu.displayName() + "'s mask is also read elsewhere", {n.inputs[0]});
        return true;
    }
    int64_t k = 0;
    if (trilu.inputs.size() > 1 && trilu.inputs[1] != kNone) {
        auto kk = constantInts(g, trilu.inputs[1]);
        if (!kk || kk->size() != 1) {
            rw.missed({id, triluId}, "not merged: the diagonal k of " + trilu.displayName() + " is not a constant", {trilu.inputs[1]});
            return true;
        }
        k = (*kk)[0];
    }
    const bool upper = trilu.attrInt("upper", 1) != 0;
    const int64_t flippedK = upper ? k - 1 : k + 1;
    // Read everything before adding: the new initializer may move the node storage.
    const ValueId ones_ = trilu.inputs[0], out = n.outputs[0];
    const std::string name = n.displayName(), triluName = trilu.displayName();
    const ValueId kValue = rw.newInitializer("k", makeTensorOf<int64_t>(DataType::Int64, {}, {flippedK}));
    const NodeId merged = rw.replaceNodes({triluId, id}, "Trilu", {ones_, kValue}, {out}, {Attribute::makeInt("upper", upper ? 0 : 1)},
                                          name + " of a triangle of ones is the other triangle", triluName);
    rw.applied({merged}, name + " of " + triluName + " became one Trilu (" + (upper ? "lower" : "upper") + ", k = " +
                             std::to_string(flippedK) + ")");
    revisit.push_back(merged);
    return true;
}

}  // namespace

bool simplifyShapeOps(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const std::string& op = n.opType;
    if (op == "Reshape" && n.inputs.size() > 1 && n.inputs[1] != kNone) return mergeReshapes(rw, id, revisit);
    if (op == "Squeeze" || op == "Unsqueeze") return cancelSqueezePair(rw, id);
    if (op == "Gather" && n.domain.empty()) return gatherOfRangeToSlice(rw, id, revisit);
    if (op == "Not" && n.domain.empty()) return notOfTriangleOfOnes(rw, id, revisit);
    if (op == "Slice" && sliceIsNoOp(g, n)) {
        bypass(rw, id, 0, "slice-noop", "Slice keeps every element (starts 0, ends past the dim, steps 1)");
        return true;
    }
    if (op == "Pad" && padIsNoOp(g, n)) {
        bypass(rw, id, 0, "pad-noop", "Pad with all pads 0");
        return true;
    }
    if (op == "Expand" && expandIsNoOp(g, n)) {
        bypass(rw, id, 0, "expand-noop", "Expand to the shape its input already has");
        return true;
    }
    return false;
}

}  // namespace passlens::passes::algebraic
