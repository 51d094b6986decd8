// Two views in a row, one of them a Reshape with a constant target, are one Reshape: Reshape,
// Unsqueeze, Squeeze and Flatten only reinterpret the dims of the same row-major elements, so the
// pair computes Reshape(x, the final dims). torch.onnx writes such pairs where a static export
// has one Reshape: `view(-1)` then `unsqueeze(0)` (reshape-as-unsqueeze made the second from a
// computed target), `flatten(start_dim=1)` then `view(1, -1)`, a meshgrid's `reshape(-1)` then
// `[:, None]`.
//  - reshape-absorbs-view: Reshape(Unsqueeze|Squeeze|Flatten(x), t) = Reshape(x, t), the 0
//    ("copy this dim") entries of t spelled out from the middle value's static dims.
//  - view-into-reshape: Unsqueeze|Squeeze|Flatten(Reshape(x, t)) = Reshape(x, t') where t' is t
//    with 1s inserted, entries dropped, or the two sides multiplied (the side holding the -1
//    stays -1).
// Refused when the middle value is read elsewhere, when a 0 entry cannot be spelled out, and when
// t' would hold a 0 (it would mean "copy" in the merged Reshape).
#include <algorithm>
#include <set>

#include "ir/IntsText.h"
#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

bool isView(const Node& n) {
    return match::inDefaultDomain(n) && (n.opType == "Unsqueeze" || n.opType == "Squeeze" || n.opType == "Flatten") &&
           n.outputs.size() == 1 && !n.inputs.empty() && n.inputs[0] != kNone;
}

/// A Reshape's constant target with its 0 entries replaced by the dims they copy (from
/// `inputDims`, the Reshape's input); nullopt when a copied dim is unknown or 0, or the target is
/// not constant. allowzero = 1 keeps a 0 as 0, which the merged Reshape could not say: refused.
std::optional<std::vector<int64_t>> resolvedTarget(const Graph& g, const Node& reshape, const Value& input) {
    if (reshape.inputs.size() < 2 || reshape.inputs[1] == kNone) return std::nullopt;
    auto t = constantInts(g, reshape.inputs[1]);
    if (!t) return std::nullopt;
    if (std::find(t->begin(), t->end(), 0) == t->end()) return t;
    if (reshape.attrInt("allowzero", 0) != 0) return std::nullopt;
    const auto dims = input.staticDims();
    for (size_t i = 0; i < t->size(); ++i) {
        if ((*t)[i] != 0) continue;
        if (!dims || i >= dims->size() || (*dims)[i] == 0) return std::nullopt;
        (*t)[i] = (*dims)[i];
    }
    return t;
}

/// Product of target entries, or -1 when one is -1; nullopt on overflow or a negative entry.
std::optional<int64_t> sideProduct(const std::vector<int64_t>& t, size_t from, size_t to) {
    int64_t p = 1;
    bool inferred = false;
    for (size_t i = from; i < to; ++i) {
        if (t[i] == -1) {
            inferred = true;
            continue;
        }
        if (t[i] < 0 || (t[i] > 0 && p > INT64_MAX / t[i])) return std::nullopt;
        p *= t[i];
    }
    return inferred ? -1 : p;
}

/// The view's result as a target for its input, given the input's target `t` (no 0 entries).
std::optional<std::vector<int64_t>> viewOfTarget(const Graph& g, const Node& view, std::vector<int64_t> t) {
    const int64_t rank = (int64_t)t.size();
    if (view.opType == "Flatten") {
        int64_t axis = view.attrInt("axis", 1);
        if (axis < 0) axis += rank;
        if (axis < 0 || axis > rank) return std::nullopt;
        auto a = sideProduct(t, 0, (size_t)axis), b = sideProduct(t, (size_t)axis, t.size());
        // A -1 beside a side of 0 elements would be ambiguous; the first Reshape had it already.
        if (!a || !b || (*a == -1 && *b == 0) || (*b == -1 && *a == 0)) return std::nullopt;
        return std::vector<int64_t>{*a, *b};
    }
    bool present = false;
    auto axes = intsFromAttrOrInput(g, view, "axes", 1, &present);
    if (!present || !axes) return std::nullopt;  // Squeeze without axes drops whatever dims are 1
    if (view.opType == "Unsqueeze") {
        const int64_t outRank = rank + (int64_t)axes->size();
        auto at = normalizedAxisSet(*axes, outRank);
        if (!at) return std::nullopt;
        std::vector<int64_t> out;
        for (int64_t pos = 0, k = 0; pos < outRank; ++pos) out.push_back(at->count(pos) ? 1 : t[(size_t)k++]);
        return out;
    }
    auto at = normalizedAxisSet(*axes, rank);
    if (!at) return std::nullopt;
    std::vector<int64_t> out;
    for (int64_t i = 0; i < rank; ++i) {
        const int64_t d = t[(size_t)i];
        if (!at->count(i)) out.push_back(d);
        else if (d != 1 && d != -1) return std::nullopt;  // Squeeze of a dim that is not 1 fails at run time
    }
    return out;
}

/// Nothing reads the node's results (a node an earlier pass left for DCE): it does not keep the
/// middle value alive.
bool unread(const Graph& g, const Node& n) {
    for (ValueId o : n.outputs)
        if (o != kNone && (!g.value(o).consumers.empty() || g.value(o).isGraphOutput || !match::subgraphReaders(g, o).empty()))
            return false;
    return true;
}

bool hasZero(const std::vector<int64_t>& t) { return std::find(t.begin(), t.end(), 0) != t.end(); }

/// What `reader` (a reader of `inner`'s result) and `inner` compute together, as one Reshape
/// target for `inner`'s input; nullopt when they are not such a pair.
std::optional<std::vector<int64_t>> pairTarget(const Graph& g, const Node& reader, const Node& inner) {
    const ValueId mid = inner.outputs[0], x = inner.inputs[0];
    if (reader.outputs.size() != 1 || reader.outputs[0] == kNone || reader.inputs.empty() || reader.inputs[0] != mid)
        return std::nullopt;
    std::optional<std::vector<int64_t>> t;
    if (reader.opType == "Reshape" && match::inDefaultDomain(reader) && isView(inner)) {
        t = resolvedTarget(g, reader, g.value(mid));
    } else if (isView(reader) && inner.opType == "Reshape") {
        auto innerTarget = resolvedTarget(g, inner, g.value(x));
        if (innerTarget && !hasZero(*innerTarget)) t = viewOfTarget(g, reader, *innerTarget);
    }
    if (!t || hasZero(*t)) return std::nullopt;
    return t;
}

}  // namespace

bool mergeViews(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (!match::inDefaultDomain(n) || n.outputs.size() != 1 || n.outputs[0] == kNone || n.inputs.empty()) return false;
    if (pattern::defaultOpset(rw.model()) < 5) return false;  // Reshape reads its target from an input from opset 5
    const ValueId mid = n.inputs[0];
    if (mid == kNone) return false;
    const NodeId innerId = g.value(mid).producer;
    if (innerId == kNone) return false;
    const Node& inner = g.node(innerId);
    if (!match::inDefaultDomain(inner) || inner.outputs.size() != 1 || inner.inputs.empty() || inner.inputs[0] == kNone)
        return false;
    auto t = pairTarget(g, n, inner);
    if (!t) return false;
    // Every reader of the middle value must merge too (or be unread), else it stays alive and
    // nothing is saved. Readers that merge the same way become equal Reshapes, which CSE makes one.
    const Value& m = g.value(mid);
    if (m.isGraphOutput || !match::subgraphReaders(g, mid).empty()) return false;
    for (NodeId r : m.consumers)
        if (r != id && !pairTarget(g, g.node(r), inner) && !unread(g, g.node(r))) return false;
    const bool absorbs = n.opType == "Reshape";
    rw.setRule(absorbs ? "reshape-absorbs-view" : "view-into-reshape");
    const std::string name = n.displayName(), innerName = inner.displayName();
    const std::string why = absorbs ? innerName + " (" + inner.opType + ") then " + name + ": one Reshape to " + intsText(*t)
                                    : innerName + " then " + name + " (" + n.opType + "): one Reshape to " + intsText(*t);
    const ValueId x = inner.inputs[0], out = n.outputs[0];
    size_t liveReaders = 0;
    for (NodeId r : m.consumers) liveReaders += unread(g, g.node(r)) ? 0 : 1;
    const bool lastReader = liveReaders <= 1 && m.consumers.size() == 1;
    const ValueId shape = rw.newInitializer(name + "_target", makeTensorOf<int64_t>(DataType::Int64, {(int64_t)t->size()}, *t));
    std::vector<NodeId> group{id};
    if (lastReader) group.insert(group.begin(), innerId);
    const NodeId merged = rw.replaceNodes(group, "Reshape", {x, shape}, {out}, {}, why, name);
    rw.applied({merged}, why);
    revisit.push_back(merged);
    return true;
}

}  // namespace passlens::passes::algebraic
