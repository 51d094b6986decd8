// Where over a Where on the same condition, or on its negation (torch's `masked_fill(m, a)`
// followed by `masked_fill(~m, b)` and the like): the outer Where decides every element the inner
// one would, so one of the inner's branches is never chosen.
//   Where(c, a, Where(Not(c), b, x)) = Where(c, a, b)
//   Where(Not(c), a, Where(c, b, x)) = Where(c, b, a)
//   Where(c, a, Where(c, b, x))      = Where(c, a, x)
// The dropped branch still took part in broadcasting: the rule applies only when its shape is
// provably no wider than what the kept inputs broadcast to, so the result keeps its shape.
#include "passes/algebraic/Rules.h"
#include "passes/match/Equality.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

bool isDefaultOp(const Node& n, const char* op) { return n.opType == op && (n.domain.empty() || n.domain == "ai.onnx"); }

/// The input of Not when `v` is Not(input), else kNone.
ValueId negated(const Graph& g, ValueId v) {
    const NodeId p = g.value(v).producer;
    if (p == kNone || !isDefaultOp(g.node(p), "Not") || g.node(p).inputs.size() != 1) return kNone;
    return g.node(p).inputs[0];
}

bool isElementwise(const Node& n) {
    static const char* const kElementwise[] = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or",
                                               "Xor", "Not", "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Cast"};
    for (const char* op : kElementwise)
        if (isDefaultOp(n, op)) return n.outputs.size() == 1;
    return false;
}

/// True when `v` and `w` provably hold the same tensor: the same value, constants with the same
/// contents, or the same elementwise op over such inputs (exporters compute `m == 0` twice for
/// two masked_fills; CSE merges them only after this pass).
bool sameValue(const Graph& g, ValueId v, ValueId w, int depth = 0) {
    if (v == w) return true;
    if (v == kNone || w == kNone || depth > 3) return false;
    const TensorPtr cv = match::constantOf(g, v), cw = match::constantOf(g, w);
    if (cv || cw) return cv && cw && cv->sameContents(*cw);
    const NodeId p = g.value(v).producer, q = g.value(w).producer;
    if (p == kNone || q == kNone) return false;
    const Node& np = g.node(p);
    const Node& nq = g.node(q);
    if (!isElementwise(np) || np.opType != nq.opType || np.domain != nq.domain || np.inputs.size() != nq.inputs.size() ||
        !sameAttributes(np.attributes, nq.attributes))
        return false;
    for (size_t i = 0; i < np.inputs.size(); ++i)
        if (!sameValue(g, np.inputs[i], nq.inputs[i], depth + 1)) return false;
    return true;
}

/// True when `v` is `x` or computed from it by elementwise ops, whose result broadcasts their
/// inputs: `x` is then no wider than `v` (Equal(x, 0), Not(Equal(x, 0))).
bool computedElementwiseFrom(const Graph& g, ValueId v, ValueId x, int depth = 0) {
    if (v == x) return true;
    const NodeId p = g.value(v).producer;
    if (p == kNone || depth > 4) return false;
    const Node& n = g.node(p);
    if (!isElementwise(n)) return false;
    for (ValueId in : n.inputs)
        if (in != kNone && computedElementwiseFrom(g, in, x, depth + 1)) return true;
    return false;
}

/// True when broadcasting `dropped` with `kept` gives what `kept` broadcast to alone: one of
/// `kept` is computed elementwise from it, or each of its dims (aligned from the right) is 1 or
/// provably equal to the same axis of one of `kept`.
bool noWiderThan(const Graph& g, ValueId droppedId, const std::vector<ValueId>& keptIds) {
    for (ValueId k : keptIds)
        if (computedElementwiseFrom(g, k, droppedId)) return true;
    const Value& dropped = g.value(droppedId);
    std::vector<const Value*> kept;
    for (ValueId k : keptIds) kept.push_back(&g.value(k));
    if (!dropped.type.shape) return false;
    const auto& dims = dropped.type.shape->dims;
    size_t rank = 0;
    for (const Value* k : kept) {
        if (!k->type.shape) return false;
        rank = std::max(rank, k->type.shape->rank());
    }
    if (dims.size() > rank) return false;
    for (size_t i = 0; i < dims.size(); ++i) {
        const Dim& d = dims[dims.size() - 1 - i];
        if (d.isStatic() && *d.value == 1) continue;
        bool matched = false;
        for (const Value* k : kept) {
            const auto& kd = k->type.shape->dims;
            if (i >= kd.size()) continue;
            const Dim& e = kd[kd.size() - 1 - i];
            // A dim_param names one value wherever it appears (see sameStaticType).
            if ((d.isStatic() && e.isStatic() && *d.value == *e.value) ||
                (!d.isStatic() && !e.isStatic() && !d.param.empty() && d.param == e.param))
                matched = true;
        }
        if (!matched) return false;
    }
    return true;
}

}  // namespace

bool mergeNestedWheres(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& outer = g.node(id);
    if (!isDefaultOp(outer, "Where") || outer.inputs.size() != 3 || outer.inputs[0] == kNone || outer.inputs[1] == kNone ||
        outer.inputs[2] == kNone)
        return false;
    const NodeId innerId = g.value(outer.inputs[2]).producer;
    if (innerId == kNone || innerId == id) return false;
    const Node& inner = g.node(innerId);
    if (!isDefaultOp(inner, "Where") || inner.inputs.size() != 3 || inner.inputs[0] == kNone || inner.inputs[1] == kNone ||
        inner.inputs[2] == kNone)
        return false;
    const ValueId c = outer.inputs[0], a = outer.inputs[1], innerCond = inner.inputs[0], b = inner.inputs[1], x = inner.inputs[2];
    const std::string name = outer.displayName(), innerName = inner.displayName();
    std::vector<ValueId> inputs;
    std::string why;
    if (sameValue(g, negated(g, innerCond), c) && noWiderThan(g, x, {c, a, b})) {
        inputs = {c, a, b};
        why = name + " picks where '" + g.value(c).name + "' holds and " + innerName +
              " where it does not: the inner Where's last input is never chosen";
    } else if (sameValue(g, negated(g, c), innerCond) && noWiderThan(g, x, {innerCond, a, b})) {
        inputs = {innerCond, b, a};
        why = name + " picks where '" + g.value(innerCond).name + "' does not hold and " + innerName +
              " where it does: the inner Where's last input is never chosen";
    } else if (sameValue(g, innerCond, c) && noWiderThan(g, b, {c, a, x})) {
        inputs = {c, a, x};
        why = name + " and " + innerName + " test the same '" + g.value(c).name +
              "': the inner Where's true branch is never chosen";
    } else {
        return false;
    }
    rw.setRule("where-nested-condition");
    const ValueId innerOut = outer.inputs[2];
    const std::vector<ValueId> outerInputs = outer.inputs;  // setInput edits: no reference is read after it
    for (size_t slot = 0; slot < 3; ++slot)
        if (outerInputs[slot] != inputs[slot]) rw.setInput(id, slot, inputs[slot], why);
    eraseDeadChain(rw, innerOut, why);  // the inner Where and its negated condition, when read nowhere else
    rw.applied({id}, why);
    revisit.push_back(id);
    return true;
}

}  // namespace passlens::passes::algebraic
