// view-transpose-reshape: Reshape(Transpose(V(x), perm), t) where V (a Reshape or an Unsqueeze)
// only splits dims of x into consecutive dims and inserts 1s, the Transpose keeps each split
// group together and in order, and t is a constant target without 0 entries, is
// Reshape(Transpose(x, perm'), t), or Reshape(x, t) when perm' keeps the order: a tensor's
// row-major element order depends only on the order of its dims larger than 1, and each group of
// V's dims walks its x dim in the same order. Detection heads write it per level
// (`view(N, A, 4, H, W).permute(0, 3, 4, 1, 2).reshape(N, -1, 4)`); on symbolic H and W the view's
// target is computed from a Shape, which then goes with V.
#include <algorithm>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// Every dim known: a number or a named expression.
std::optional<std::vector<Dim>> knownDims(const Value& v) {
    if (!v.type.isTensor() || !v.type.shape) return std::nullopt;
    for (const Dim& d : v.type.shape->dims)
        if (!d.value && d.param.empty()) return std::nullopt;
    return v.type.shape->dims;
}

bool isOne(const Dim& d) { return d.value == int64_t(1); }

/// For each dim of `mid` larger than 1 (or symbolic), the dim of `in` it is part of, when `mid`
/// only splits `in`'s dims into consecutive runs and inserts or drops 1s; -1 for 1s.
std::optional<std::vector<int>> splitGroups(const std::vector<Dim>& in, const std::vector<Dim>& mid) {
    std::vector<int> group(mid.size(), -1);
    size_t j = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (isOne(in[i])) continue;
        while (j < mid.size() && isOne(mid[j])) ++j;
        if (j == mid.size()) return std::nullopt;
        if (!in[i].value) {  // a symbolic dim is kept whole, as the same expression
            if (mid[j].value || mid[j].param != in[i].param) return std::nullopt;
            group[j++] = (int)i;
            continue;
        }
        int64_t product = 1;
        while (product < *in[i].value) {
            while (j < mid.size() && isOne(mid[j])) ++j;
            if (j == mid.size() || !mid[j].value || *mid[j].value <= 0 || product > *in[i].value / *mid[j].value) return std::nullopt;
            product *= *mid[j].value;
            group[j++] = (int)i;
        }
        if (product != *in[i].value) return std::nullopt;
    }
    for (; j < mid.size(); ++j)
        if (!isOne(mid[j])) return std::nullopt;
    return group;
}

}  // namespace

bool viewTransposeReshape(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.opType != "Reshape" || !match::inDefaultDomain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    auto target = constantInts(g, n.inputs[1]);
    if (!target || std::find(target->begin(), target->end(), 0) != target->end()) return false;
    const ValueId transposed = n.inputs[0];
    const NodeId tId = transposed == kNone ? kNone : g.value(transposed).producer;
    if (tId == kNone || !match::hasSingleReader(g, transposed)) return false;
    const Node& t = g.node(tId);
    if (t.opType != "Transpose" || !match::inDefaultDomain(t) || t.inputs.empty() || t.inputs[0] == kNone) return false;
    const ValueId mid = t.inputs[0];
    const NodeId vId = g.value(mid).producer;
    if (vId == kNone || !match::hasSingleReader(g, mid)) return false;
    const Node& v = g.node(vId);
    if ((v.opType != "Reshape" && v.opType != "Unsqueeze") || !match::inDefaultDomain(v) || v.inputs.empty() || v.inputs[0] == kNone)
        return false;
    const ValueId x = v.inputs[0];
    auto in = knownDims(g.value(x)), middle = knownDims(g.value(mid));
    if (!in || !middle) return false;
    auto groups = splitGroups(*in, *middle);
    if (!groups) return false;
    std::vector<int64_t> perm = t.attrInts("perm");
    if (perm.empty())
        for (size_t i = middle->size(); i-- > 0;) perm.push_back((int64_t)i);  // default: reverse
    if (perm.size() != middle->size()) return false;
    // x's dims in the order the transposed tensor walks them; each group contiguous, in order.
    std::vector<int> order;
    int lastPart = -1;
    for (int64_t p : perm) {
        if (p < 0 || p >= (int64_t)middle->size()) return false;
        const int grp = (*groups)[(size_t)p];
        if (grp < 0) continue;
        if (!order.empty() && order.back() == grp) {
            if (p != lastPart + 1) return false;  // a group's parts out of order
        } else {
            if (std::find(order.begin(), order.end(), grp) != order.end()) return false;  // a group cut in two
            order.push_back(grp);
        }
        lastPart = (int)p;
    }
    std::vector<int64_t> newPerm;
    for (size_t i = 0; i < in->size(); ++i)
        if (isOne((*in)[i])) newPerm.push_back((int64_t)i);
    for (int grp : order) newPerm.push_back(grp);
    if (newPerm.size() != in->size()) return false;
    std::vector<int64_t> bigOnly;
    for (int64_t p : newPerm)
        if (!isOne((*in)[(size_t)p])) bigOnly.push_back(p);
    const bool keepsOrder = std::is_sorted(bigOnly.begin(), bigOnly.end());
    rw.setRule("view-transpose-reshape");
    const std::string name = n.displayName(), vName = v.displayName(), tName = t.displayName();
    const ValueId out = n.outputs[0], shape = n.inputs[1];
    const std::vector<Attribute> attrs = n.attributes;  // n is not read after the first edit
    const std::string why = vName + " only splits dims that " + tName + " keeps together and in order: " +
                            (keepsOrder ? name + " reads x directly" : "the Transpose moves x's dims instead");
    NodeId result = kNone;
    if (keepsOrder) {
        result = rw.replaceNodes({vId, tId, id}, "Reshape", {x, shape}, {out}, attrs, why, name);
    } else {
        Shape movedShape;
        for (int64_t p : newPerm) movedShape.dims.push_back((*in)[(size_t)p]);
        const ValueId moved = rw.newValue(g.value(transposed).name + "_of_input", TypeInfo::tensor(g.value(x).type.elemType, movedShape));
        rw.addNode("Transpose", {x}, {moved}, {Attribute::makeInts("perm", newPerm)}, {}, why, tName);
        result = rw.replaceNodes({vId, tId, id}, "Reshape", {moved, shape}, {out}, attrs, why, name);
        rw.restoreTopologicalOrder();
    }
    rw.applied({result}, why);
    revisit.push_back(result);
    return true;
}

}  // namespace passlens::passes::algebraic
