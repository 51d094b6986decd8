// Reshape(f(Unsqueeze(x), s...), T) = f(Reshape(x, T), s...) for elementwise f whose other
// operands s are scalars (rank 0, or one-element constants): every value of the chain has the
// Unsqueeze's shape, so reshaping the chain's one tensor input reshapes every value alike, and an
// Unsqueeze then a Reshape is one Reshape (T has no 0 entry, which would copy a dim of the
// input it reads). The chain may share values (t < -4 and t < -2 over one t) as long as nothing
// outside it reads them. One node less: the Unsqueeze. Swin's shifted-window row labels,
// `Where(t < -4, 0, Where(t < -2, 3, 6))` over `t = Unsqueeze(Range(0, P), 1) - P`, cut into
// windows by outer-sum-windows, are so.
#include <algorithm>
#include <map>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// The rank a one-element operand broadcasts with (0 for a rank-0 value), or -1 when `v` is not
/// such an operand.
int64_t scalarRank(const Graph& g, ValueId v) {
    if (match::rankOf(g, v) == 0) return 0;
    TensorPtr t = match::constantOf(g, v);
    return t && t->elementCount() == 1 ? (int64_t)t->dims.size() : -1;
}

struct Cone {
    std::set<NodeId> nodes;
    ValueId leaf = kNone;  ///< the Unsqueeze's output every tensor operand comes from
};

/// The elementwise nodes below `top` down to one Unsqueeze: by induction every value in it has
/// the Unsqueeze's shape, since each node's other operands are one-element (no wider than it).
std::optional<Cone> coneOf(const Rewriter& rw, NodeId top) {
    const Graph& g = rw.graph();
    Cone cone;
    int64_t widestScalar = 0;
    std::vector<NodeId> work{top};
    while (!work.empty()) {
        const NodeId id = work.back();
        work.pop_back();
        if (!cone.nodes.insert(id).second) continue;
        if (cone.nodes.size() > 16) return std::nullopt;
        const Node& n = g.node(id);
        if (!isElementwiseOp(n)) return std::nullopt;
        for (ValueId in : n.inputs) {
            if (int64_t r = scalarRank(g, in); r >= 0) {
                widestScalar = std::max(widestScalar, r);
                continue;
            }
            const NodeId p = g.value(in).producer;
            if (p == kNone) return std::nullopt;
            const Node& pn = g.node(p);
            if (pn.opType == "Unsqueeze" && match::inDefaultDomain(pn) && !pn.inputs.empty() && pn.inputs[0] != kNone) {
                if (cone.leaf != kNone && cone.leaf != in) return std::nullopt;  // one tensor input only
                cone.leaf = in;
                continue;
            }
            work.push_back(p);
        }
    }
    if (cone.leaf == kNone || match::rankOf(g, cone.leaf) < widestScalar) return std::nullopt;
    // Nothing outside reads the chain (the top is read by the Reshape alone) or the Unsqueeze.
    // Readers an earlier pass left dead (dce runs later) do not count; the rewrite erases them.
    for (NodeId id : cone.nodes)
        if (id != top && readOutsideByLiveNodes(rw, g.node(id).outputs[0], cone.nodes)) return std::nullopt;
    if (readOutsideByLiveNodes(rw, cone.leaf, cone.nodes)) return std::nullopt;
    return cone;
}

}  // namespace

bool sinkReshapeToUnsqueeze(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& r = g.node(id);
    if (r.opType != "Reshape" || !match::inDefaultDomain(r) || r.inputs.size() != 2 || r.outputs.size() != 1 ||
        r.inputs[0] == kNone || r.inputs[1] == kNone)
        return false;
    auto target = constantInts(g, r.inputs[1]);
    if (!target || std::find(target->begin(), target->end(), 0) != target->end()) return false;
    const ValueId v = r.inputs[0];
    const NodeId top = g.value(v).producer;
    if (top == kNone || !match::hasSingleReader(g, v) || !isElementwiseOp(g.node(top))) return false;
    const TypeInfo outType = g.value(r.outputs[0]).type;
    auto cone = coneOf(rw, top);
    if (!cone) return false;
    const NodeId unsqueeze = g.value(cone->leaf).producer;
    const ValueId x = g.node(unsqueeze).inputs[0];
    rw.setRule("reshape-through-elementwise");
    const std::string name = r.displayName();
    const ValueId rShape = r.inputs[1], rOut = r.outputs[0];  // r is not read after the first edit
    const std::string why = name + " of " + g.node(top).displayName() + " (elementwise over " +
                            g.node(unsqueeze).displayName() + " and scalars): the Unsqueeze's input takes the Reshape";
    auto typed = [&](DataType t) { return outType.isTensor() ? TypeInfo::tensor(t, outType.shape) : TypeInfo{}; };
    std::map<ValueId, ValueId> renamed;
    const ValueId reshaped = rw.newValue(g.value(x).name + "_reshaped", typed(g.value(cone->leaf).type.elemType));
    revisit.push_back(rw.addNode("Reshape", {x, rShape}, {reshaped}, {}, {unsqueeze, id}, why, name));
    renamed[cone->leaf] = reshaped;
    // The chain again in graph order, over the reshaped values; the top takes the Reshape's output.
    const std::vector<ValueId> topInputs = g.node(top).inputs;
    std::vector<NodeId> order;
    for (NodeId n : g.nodeOrder())
        if (cone->nodes.count(n)) order.push_back(n);
    NodeId newTop = kNone;
    for (NodeId n : order) {
        const Node copy = rw.graph().node(n);
        std::vector<ValueId> in;
        for (ValueId i : copy.inputs) in.push_back(renamed.count(i) ? renamed[i] : i);
        if (n == top) {
            newTop = rw.replaceNodes({top, id}, copy.opType, in, {rOut}, copy.attributes, why, copy.displayName());
            continue;
        }
        const ValueId out = rw.newValue(rw.graph().value(copy.outputs[0]).name + "_reshaped",
                                        typed(rw.graph().value(copy.outputs[0]).type.elemType));
        revisit.push_back(rw.addNode(copy.opType, in, {out}, copy.attributes, {n}, why, copy.displayName()));
        renamed[copy.outputs[0]] = out;
    }
    // The old chain and the Unsqueeze, as far as nothing reads them (dead readers go with dce).
    for (ValueId in : topInputs) eraseDeadChain(rw, in, why);
    rw.restoreTopologicalOrder();
    rw.applied({newTop}, why);
    revisit.push_back(newTop);
    return true;
}

}  // namespace passlens::passes::algebraic
