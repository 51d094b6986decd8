// concat-of-scaled-split: Concat(Mul(Split(x)_0, r_0), ..., Mul(Split(x)_k, r_k)) on the Split's
// axis, every part one slice thick and every r_i one element, is Mul(x, R) with
// R = Concat(r_0, ..., r_k) shaped to broadcast along that axis: each output element is the same
// product of the same two numbers. torchvision's resize_boxes writes it (`boxes.unbind(1)`, each
// column times its ratio, `stack`), after elementwise-through-squeeze has dropped the Squeeze /
// Unsqueeze pairs; a static export folds the ratios to 1 and is left with Concat(Split(x)) = x,
// which this rule also removes.
// Kept only when it removes more nodes than it adds (Split, k Muls and the Concat go; a Reshape per
// distinct r_i not already of R's rank, a Concat and a Mul come).
#include <cstdint>
#include <map>

#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// A tensor of one element (every dim static and 1, or a scalar).
bool oneElement(const Value& v) {
    auto dims = v.staticDims();
    if (!dims) return false;
    for (int64_t d : *dims)
        if (d != 1) return false;
    return true;
}

}  // namespace

bool concatOfScaledSplit(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& concat = g.node(id);
    if (concat.opType != "Concat" || !match::inDefaultDomain(concat) || concat.outputs.size() != 1 || concat.inputs.empty())
        return false;
    // Each input: a Split output read only here, directly or through a Mul by a one-element r.
    NodeId splitId = kNone;
    std::vector<NodeId> muls;
    std::vector<ValueId> factors;
    for (size_t i = 0; i < concat.inputs.size(); ++i) {
        const ValueId in = concat.inputs[i];
        if (in == kNone || !match::hasSingleReader(g, in)) return false;
        ValueId part = in, factor = kNone;
        const NodeId p = g.value(in).producer;
        if (p == kNone) return false;
        const Node& pn = g.node(p);
        if (pn.opType == "Mul" && match::inDefaultDomain(pn) && pn.inputs.size() == 2) {
            for (size_t s = 0; s < 2 && factor == kNone; ++s) {
                const ValueId a = pn.inputs[s], b = pn.inputs[1 - s];
                const NodeId ap = a == kNone ? kNone : g.value(a).producer;
                if (ap != kNone && g.node(ap).opType == "Split" && b != kNone && oneElement(g.value(b))) {
                    part = a;
                    factor = b;
                }
            }
            if (factor == kNone || !match::hasSingleReader(g, part)) return false;
            muls.push_back(p);
        }
        const NodeId sp = g.value(part).producer;
        if (sp == kNone || g.node(sp).opType != "Split" || !match::inDefaultDomain(g.node(sp))) return false;
        if (splitId == kNone) splitId = sp;
        if (sp != splitId || g.node(sp).outputs.size() != concat.inputs.size() || g.node(sp).outputs[i] != part) return false;
        factors.push_back(factor);
    }
    const Node& split = g.node(splitId);
    if (split.inputs.empty() || split.inputs[0] == kNone) return false;
    const ValueId x = split.inputs[0];
    const auto rank = g.value(x).rank();
    if (!rank || *rank == 0) return false;
    auto normalized = [&](int64_t a) { return a < 0 ? a + (int64_t)*rank : a; };
    const int64_t axis = normalized(split.attrInt("axis", 0));
    if (axis < 0 || axis >= (int64_t)*rank || normalized(concat.attrInt("axis", 0)) != axis) return false;
    const bool scaled = !muls.empty();
    if (scaled && pattern::defaultOpset(rw.model()) < 5) return false;  // Reshape's target is an input from opset 5
    if (scaled && muls.size() != factors.size()) return false;  // some parts scaled, some not: not handled
    const size_t tail = *rank - (size_t)axis;                    // R's rank: it lines up with x's axis
    std::map<ValueId, bool> reshapeNeeded;
    if (scaled) {
        const DataType t = g.value(x).type.elemType;
        for (size_t i = 0; i < factors.size(); ++i) {
            const Value& part = g.value(split.outputs[i]);
            const auto partRank = part.rank();
            const Value& r = g.value(factors[i]);
            if (!partRank || *partRank != *rank || !part.type.shape || part.type.shape->dims[(size_t)axis].value != int64_t(1))
                return false;  // each part one slice thick, so R holds one factor per slice
            const size_t rRank = r.rank().value_or(SIZE_MAX);
            if (r.type.elemType != t || rRank > *rank) return false;  // r would widen the result
            reshapeNeeded[factors[i]] = rRank != tail;
        }
        size_t added = 2;
        for (const auto& [r, need] : reshapeNeeded) added += need ? 1 : 0;
        if (added >= 2 + factors.size()) return false;
    }
    if (g.value(concat.outputs[0]).isGraphOutput && g.value(x).isGraphInput && !scaled) return false;
    rw.setRule("concat-of-scaled-split");
    const std::string name = concat.displayName(), splitName = split.displayName();
    const ValueId out = concat.outputs[0];
    std::vector<NodeId> group{splitId};
    group.insert(group.end(), muls.begin(), muls.end());
    group.push_back(id);
    if (!scaled) {
        const std::string why = name + " joins the parts of " + splitName + " in order on its axis: its input";
        const NodeId same = rw.replaceNodes(group, "Identity", {x}, {out}, {}, why, name);
        rw.applied({same}, why);
        revisit.push_back(same);  // the neutral rules drop the Identity
        return true;
    }
    const std::string why = name + " of " + std::to_string(factors.size()) + " parts of " + splitName +
                            ", each times one number: one Mul by the numbers side by side";
    const DataType elem = g.value(x).type.elemType;
    auto ones = [&](int64_t lead) {
        Shape s;
        s.dims.push_back(Dim::of(lead));
        for (size_t i = 1; i < tail; ++i) s.dims.push_back(Dim::of(1));
        return TypeInfo::tensor(elem, s);
    };
    std::map<ValueId, ValueId> shaped;
    std::vector<ValueId> pieces;
    for (ValueId r : factors) {
        if (!reshapeNeeded[r]) {
            pieces.push_back(r);
            continue;
        }
        auto [it, fresh] = shaped.emplace(r, kNone);
        if (fresh) {
            const ValueId target = rw.newInitializer(name + "_factor_shape",
                                                     makeTensorOf<int64_t>(DataType::Int64, {(int64_t)tail}, std::vector<int64_t>(tail, 1)));
            it->second = rw.newValue(rw.graph().value(r).name + "_as_factor", ones(1));
            rw.addNode("Reshape", {r, target}, {it->second}, {}, {}, why, name + "_factor");
        }
        pieces.push_back(it->second);
    }
    const ValueId factorsValue = rw.newValue(name + "_factors", ones((int64_t)factors.size()));
    const NodeId factorsNode = rw.addNode("Concat", pieces, {factorsValue}, {Attribute::makeInt("axis", 0)}, {}, why, name + "_factors");
    const NodeId mul = rw.replaceNodes(group, "Mul", {x, factorsValue}, {out}, {}, why, name);
    rw.applied({mul}, why);
    rw.restoreTopologicalOrder();
    revisit.push_back(mul);
    revisit.push_back(factorsNode);  // the factors may be scalar lanes of one vector (scalar-lanes-to-vector)
    return true;
}

}  // namespace passlens::passes::algebraic
