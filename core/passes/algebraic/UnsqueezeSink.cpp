// Unsqueeze(f(...), A) = f(...) with every operand unsqueezed at A, for elementwise ops: operands
// of the result's rank broadcast the same way with the 1s inserted at the same places, and a
// one-element operand broadcasts anywhere. Worth it only when no operand needs a new node: the
// operands are themselves Unsqueezes read only here (the two Unsqueezes become one,
// unsqueeze-unsqueeze), one-element constants, or elementwise results read only here whose own
// operands are such (the rule descends). Then the outer Unsqueeze is the one node saved.
// torchvision's Swin writes its shifted-window mask so:
// `(m.unsqueeze(1) - m.unsqueeze(2)) == 0 → where(0, -100) → unsqueeze([0, 2])`.
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

bool oneElementConstant(const Graph& g, ValueId v, int64_t rank) {
    TensorPtr t = match::constantOf(g, v);
    return t && t->elementCount() == 1 && (int64_t)t->dims.size() <= rank;
}

/// How `v` (an operand of an elementwise node of rank `rank`) takes the Unsqueeze.
enum class Operand { AsIs, Unsqueezed, Descend, Refused };

Operand classify(const Graph& g, ValueId v, int64_t rank) {
    if (oneElementConstant(g, v, rank)) return Operand::AsIs;
    if (match::rankOf(g, v) != rank || !match::hasSingleReader(g, v)) return Operand::Refused;
    const NodeId p = g.value(v).producer;
    if (p == kNone) return Operand::Refused;
    const Node& n = g.node(p);
    if (n.opType == "Unsqueeze" && match::inDefaultDomain(n) && !n.inputs.empty() && n.inputs[0] != kNone &&
        intsFromAttrOrInput(g, n, "axes", 1))
        return Operand::Unsqueezed;
    return isElementwiseOp(n) ? Operand::Descend : Operand::Refused;
}

/// True when every operand below `node` takes the Unsqueeze without a new node.
bool sinkable(const Graph& g, const Node& node, int64_t rank, int depth) {
    if (depth > 8) return false;
    for (ValueId v : node.inputs) {
        switch (classify(g, v, rank)) {
        case Operand::AsIs:
        case Operand::Unsqueezed: break;
        case Operand::Descend:
            if (!sinkable(g, g.node(g.value(v).producer), rank, depth + 1)) return false;
            break;
        case Operand::Refused: return false;
        }
    }
    return true;
}

class Sinker {
public:
    /// `inserted`: the new axes as positions of the result (non-negative, sorted).
    Sinker(Rewriter& rw, ValueId axes, std::vector<Attribute> axesAttr, int64_t rank, std::set<int64_t> inserted,
           std::string why, Revisit& revisit)
        : rw_(rw), axes_(axes), axesAttr_(std::move(axesAttr)), rank_(rank), inserted_(std::move(inserted)),
          why_(std::move(why)), revisit_(revisit) {}

    /// The operands of `node` with the Unsqueeze applied.
    std::vector<ValueId> operands(const Node& node) {
        std::vector<ValueId> out;
        for (ValueId v : node.inputs) out.push_back(sunk(v));
        return out;
    }
    const std::vector<NodeId>& retired() const { return retired_; }

private:
    ValueId sunk(ValueId v) {
        const Graph& g = rw_.graph();
        const Operand kind = classify(g, v, rank_);
        if (kind == Operand::AsIs) return v;
        const NodeId p = g.value(v).producer;
        // Typed, so the rule (and others) can read the rank of what it made in the same run.
        std::string hint = g.value(v).name;
        if (!hint.ends_with("_unsqueezed")) hint += "_unsqueezed";  // a second sink keeps one suffix
        const ValueId out = rw_.newValue(hint, unsqueezedType(g.value(v).type));
        if (kind == Operand::Unsqueezed) {
            // unsqueeze-unsqueeze merges it with the Unsqueeze below on the revisit.
            std::vector<ValueId> in{v};
            if (axes_ != kNone) in.push_back(axes_);
            revisit_.push_back(rw_.addNode("Unsqueeze", in, {out}, axesAttr_, {}, why_));
            return out;
        }
        const Node copy = g.node(p);  // addNode may move the node table
        std::vector<ValueId> in = operands(copy);
        rw_.addNode(copy.opType, in, {out}, copy.attributes, {p}, why_, copy.displayName());
        retired_.push_back(p);
        return out;
    }

    TypeInfo unsqueezedType(const TypeInfo& t) const {
        if (!t.isTensor() || !t.shape || (int64_t)t.shape->rank() != rank_) return {};
        Shape s;
        auto dim = t.shape->dims.begin();
        for (int64_t pos = 0; pos < rank_ + (int64_t)inserted_.size(); ++pos)
            s.dims.push_back(inserted_.count(pos) ? Dim::of(1) : *dim++);
        return TypeInfo::tensor(t.elemType, s);
    }

    Rewriter& rw_;
    ValueId axes_;
    std::vector<Attribute> axesAttr_;
    int64_t rank_;
    std::set<int64_t> inserted_;
    std::string why_;
    Revisit& revisit_;
    std::vector<NodeId> retired_;
};

}  // namespace

bool sinkUnsqueezeThroughElementwise(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& outer = g.node(id);
    if (outer.opType != "Unsqueeze" || !match::inDefaultDomain(outer) || outer.outputs.size() != 1 || outer.inputs.empty())
        return false;
    const ValueId mid = outer.inputs[0];
    const NodeId fId = mid == kNone ? kNone : g.value(mid).producer;
    if (fId == kNone || !match::hasSingleReader(g, mid) || !isElementwiseOp(g.node(fId))) return false;
    auto axesList = intsFromAttrOrInput(g, outer, "axes", 1);
    const int64_t rank = match::rankOf(g, mid);
    if (!axesList || rank < 0) return false;
    auto inserted = normalizedAxisSet(*axesList, rank + (int64_t)axesList->size());
    if (!inserted) return false;
    const Node f = g.node(fId);
    if (!sinkable(g, f, rank, 0)) return false;
    rw.setRule("unsqueeze-through-elementwise");
    const std::string name = outer.displayName();
    const std::string why = name + " of " + f.displayName() +
                            " (elementwise down to Unsqueezes and one-element constants): each operand takes it instead";
    std::vector<Attribute> axesAttr;
    if (const Attribute* a = outer.attr("axes")) axesAttr.push_back(*a);
    const ValueId axes = axesAttr.empty() ? outer.inputs[1] : kNone;
    const ValueId out = outer.outputs[0];  // outer is not read once the sinker edits the graph
    Sinker sinker(rw, axes, axesAttr, rank, *inserted, why, revisit);
    std::vector<ValueId> in = sinker.operands(f);
    const NodeId root = rw.replaceNodes({fId, id}, f.opType, in, {out}, f.attributes, why, f.displayName());
    // Readers before what they read: the list is in post-order.
    for (auto it = sinker.retired().rbegin(); it != sinker.retired().rend(); ++it)
        if (rw.graph().hasNode(*it)) rw.eraseNode(*it, why);
    rw.restoreTopologicalOrder();
    rw.applied({root}, why);
    revisit.push_back(root);
    return true;
}

}  // namespace passlens::passes::algebraic
