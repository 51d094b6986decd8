// Slice(Slice(x, s1, e1, A1, p1), s2, e2, A2, p2) with disjoint axes A1, A2 = one Slice over
// A1 ∪ A2: each axis is clamped and stepped against its own dim only, and slicing one axis leaves
// the others' dims as they were, so the order does not matter. Exporters write `x[:, :H, :W]` as
// two Slices (torchvision's Swin un-pads each window block so); merged, the ends are one vector:
// a constant, or — for ends read from a shape, `Shape(x0, 1, 2)` then `Shape(x0, 2, 3)` — the one
// slice `Shape(x0, 1, 3)`, which CSE merges with an equal Shape already there.
#include <algorithm>
#include <set>

#include "ir/Tensor.h"
#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// A Slice's constant parts, from its inputs (opset >= 10): starts, axes (default 0..n-1) and
/// steps (default 1s); its ends value is read separately.
struct SliceParts {
    std::vector<int64_t> starts, axes, steps;
    ValueId ends = kNone;
};

std::optional<SliceParts> sliceParts(const Graph& g, const Node& n) {
    if (n.opType != "Slice" || !match::inDefaultDomain(n) || n.outputs.size() != 1 || n.inputs.size() < 3 ||
        n.inputs.size() > 5 || n.attr("starts") || n.inputs[0] == kNone || n.inputs[1] == kNone || n.inputs[2] == kNone)
        return std::nullopt;
    SliceParts p;
    auto starts = constantInts(g, n.inputs[1]);
    if (!starts || starts->empty()) return std::nullopt;
    p.starts = *starts;
    p.ends = n.inputs[2];
    const size_t count = p.starts.size();
    if (n.inputs.size() > 3 && n.inputs[3] != kNone) {
        auto axes = constantInts(g, n.inputs[3]);
        if (!axes) return std::nullopt;
        p.axes = *axes;
    } else {
        for (size_t i = 0; i < count; ++i) p.axes.push_back((int64_t)i);
    }
    if (n.inputs.size() > 4 && n.inputs[4] != kNone) {
        auto steps = constantInts(g, n.inputs[4]);
        if (!steps) return std::nullopt;
        p.steps = *steps;
    } else {
        p.steps.assign(count, 1);
    }
    if (p.axes.size() != count || p.steps.size() != count) return std::nullopt;  // the op would fail
    return p;
}

/// `Shape(y, start, end)` behind `v`, with start/end resolved against y's rank.
struct ShapeRange {
    ValueId of = kNone;
    int64_t start = 0, end = 0;
};

std::optional<ShapeRange> shapeRange(const Graph& g, ValueId v) {
    const NodeId p = g.value(v).producer;
    if (p == kNone) return std::nullopt;
    const Node& s = g.node(p);
    if (s.opType != "Shape" || !match::inDefaultDomain(s) || s.inputs.empty() || s.inputs[0] == kNone) return std::nullopt;
    const int64_t r = match::rankOf(g, s.inputs[0]);
    if (r < 0) return std::nullopt;
    auto clampIndex = [r](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + r : i, 0, r); };
    const int64_t start = clampIndex(s.attrInt("start", 0));
    const int64_t end = std::max(start, clampIndex(s.attrInt("end", r)));
    return ShapeRange{s.inputs[0], start, end};
}

template <class T>
std::vector<T> joined(std::vector<T> a, const std::vector<T>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

TensorPtr int64Vector(const std::vector<int64_t>& v) {
    return makeTensorOf<int64_t>(DataType::Int64, {(int64_t)v.size()}, v);
}

}  // namespace

bool mergeSlices(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& outer = g.node(id);
    auto second = sliceParts(g, outer);
    if (!second) return false;
    const ValueId mid = outer.inputs[0];
    const NodeId innerId = g.value(mid).producer;
    if (innerId == kNone || !match::hasSingleReader(g, mid)) return false;
    const Node& inner = g.node(innerId);
    auto first = sliceParts(g, inner);
    if (!first || pattern::defaultOpset(rw.model()) < 10) return false;
    const ValueId x = inner.inputs[0];
    const int64_t rank = match::rankOf(g, x);
    auto axes1 = normalizedAxes(first->axes, rank), axes2 = normalizedAxes(second->axes, rank);
    if (!axes1 || !axes2) return false;
    for (int64_t a : *axes2)
        if (std::find(axes1->begin(), axes1->end(), a) != axes1->end()) return false;  // one axis cut twice

    // The merged ends: both constant, or two adjacent slices of one Shape. Anything else would
    // need a Concat, and two Slices become a Slice and a Concat: nothing saved.
    rw.setRule("slice-slice-merge");
    const std::string name = outer.displayName(), innerName = inner.displayName();
    auto ends1 = constantInts(g, first->ends), ends2 = constantInts(g, second->ends);
    auto range1 = shapeRange(g, first->ends), range2 = shapeRange(g, second->ends);
    bool innerFirst = true;  // the merged vectors list the inner Slice's axes first
    if (!(ends1 && ends2)) {
        const bool sameShape = range1 && range2 && range1->of == range2->of && range1->start < range1->end &&
                               range2->start < range2->end;
        if (!sameShape || (range1->end != range2->start && range2->end != range1->start)) {
            rw.missed({innerId, id}, "not one Slice: " + innerName + " and " + name +
                                         " cut different axes, but their ends are not both constants or adjacent "
                                         "slices of one Shape (merging them would need a Concat)",
                      {first->ends, second->ends});
            return true;
        }
        innerFirst = range1->end == range2->start;
    }
    // Ends of another length than the starts: the original fails at run time; leave it so.
    auto endsCount = [](const std::optional<std::vector<int64_t>>& c, const std::optional<ShapeRange>& r) {
        return c ? (int64_t)c->size() : r->end - r->start;
    };
    if (endsCount(ends1, range1) != (int64_t)first->starts.size() ||
        endsCount(ends2, range2) != (int64_t)second->starts.size())
        return false;

    const SliceParts& a = innerFirst ? *first : *second;
    const SliceParts& b = innerFirst ? *second : *first;
    const std::vector<int64_t>& axesA = innerFirst ? *axes1 : *axes2;
    const std::vector<int64_t>& axesB = innerFirst ? *axes2 : *axes1;
    const std::string why = innerName + " and " + name + " cut different axes of '" + g.value(x).name +
                            "': one Slice cuts them all";
    const ValueId out = outer.outputs[0];  // outer is not read after the first edit
    const ValueId starts = rw.newInitializer(name + "_starts", int64Vector(joined(a.starts, b.starts)));
    const ValueId axes = rw.newInitializer(name + "_axes", int64Vector(joined(axesA, axesB)));
    const ValueId steps = rw.newInitializer(name + "_steps", int64Vector(joined(a.steps, b.steps)));
    ValueId ends = kNone;
    if (ends1 && ends2) {
        ends = rw.newInitializer(name + "_ends", int64Vector(innerFirst ? joined(*ends1, *ends2) : joined(*ends2, *ends1)));
    } else {
        const ShapeRange& lo = innerFirst ? *range1 : *range2;
        const ShapeRange& hi = innerFirst ? *range2 : *range1;
        ends = rw.newValue(name + "_ends");
        rw.addNode("Shape", {lo.of}, {ends}, {Attribute::makeInt("start", lo.start), Attribute::makeInt("end", hi.end)}, {},
                   why, name + "_ends");
    }
    const NodeId merged = rw.replaceNodes({innerId, id}, "Slice", {x, starts, ends, axes, steps}, {out}, {}, why, name);
    // The Slice stands where the outer one stood; a new Shape comes last in the list.
    if (!(ends1 && ends2)) rw.restoreTopologicalOrder();
    rw.applied({merged}, why);
    revisit.push_back(merged);
    return true;
}

}  // namespace passlens::passes::algebraic
