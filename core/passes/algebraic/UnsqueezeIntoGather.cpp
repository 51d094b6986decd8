// unsqueeze-into-gather: Unsqueeze(Gather(x, k, axis=a), [a]) with a scalar k is Gather(x, [k],
// axis=a): the gathered slice keeps its axis as a dim of 1. Exporters write a box decode as
// `boxes[:, 0]` … elementwise … `[:, None]` (torchvision's BoxCoder: widths, centres, then
// `widths[:, None]`), so the Unsqueezes sit after elementwise ops over several such Gathers, and a
// value is read by an op and by an Unsqueeze. The rule takes the whole cone at once: the
// elementwise nodes and Gathers whose every reader is in the cone or an Unsqueeze at a, every
// value of one rank, other operands one-element constants. Each Gather then takes [k], each node
// computes the same elements with the dim of 1 in place (operands of one rank broadcast the same
// way with a 1 inserted at the same place; one element broadcasts anywhere), and the Unsqueezes go.
#include <algorithm>
#include <map>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

constexpr size_t kMaxCone = 32;

/// The one axis of an Unsqueeze of a rank-`rank` value, made non-negative; nullopt otherwise.
std::optional<int64_t> unsqueezeAxis(const Graph& g, const Node& n, int64_t rank) {
    if (n.opType != "Unsqueeze" || !match::inDefaultDomain(n) || n.inputs.empty() || n.outputs.size() != 1) return std::nullopt;
    auto axes = intsFromAttrOrInput(g, n, "axes", 1);
    if (!axes || axes->size() != 1) return std::nullopt;
    auto norm = normalizedAxes(*axes, rank + 1);
    if (!norm) return std::nullopt;
    return (*norm)[0];
}

/// The cone around one Unsqueeze: elementwise nodes and leaf Gathers, and the Unsqueezes it feeds.
struct Cone {
    int64_t rank = -1, axis = -1;
    std::set<NodeId> nodes;       ///< elementwise nodes and leaf Gathers
    std::set<NodeId> unsqueezes;  ///< the readers that go
};

class ConeBuilder {
public:
    ConeBuilder(const Rewriter& rw, Cone& cone) : rw_(rw), g_(rw.graph()), cone_(cone) {}

    /// Grows the cone from `seed` (a value an Unsqueeze reads) to closure; false when some value
    /// has a reader or an operand the rule cannot take.
    bool grow(ValueId seed) {
        std::vector<ValueId> work{seed};
        std::set<ValueId> seen;
        while (!work.empty()) {
            const ValueId v = work.back();
            work.pop_back();
            if (!seen.insert(v).second) continue;
            if (match::rankOf(g_, v) != cone_.rank) return false;
            const Value& val = g_.value(v);
            if (val.isGraphOutput || rw_.isCapturedBySubgraph(v) || val.producer == kNone) return false;
            if (!addProducer(val.producer, work)) return false;
            for (NodeId c : val.consumers) {
                if (cone_.nodes.count(c) || cone_.unsqueezes.count(c)) continue;
                const Node& reader = g_.node(c);
                if (auto a = unsqueezeAxis(g_, reader, cone_.rank); a && reader.inputs[0] == v) {
                    if (*a != cone_.axis || !unsqueezeOutputOk(reader)) return false;
                    cone_.unsqueezes.insert(c);
                    continue;
                }
                if (!isElementwiseOp(reader) || reader.outputs.size() != 1) return false;
                work.push_back(reader.outputs[0]);  // its producer (the reader) joins the cone
            }
            if (cone_.nodes.size() > kMaxCone) return false;
        }
        return true;
    }

private:
    bool unsqueezeOutputOk(const Node& u) const {
        return u.outputs[0] != kNone && !rw_.isCapturedBySubgraph(u.outputs[0]);
    }

    bool addProducer(NodeId p, std::vector<ValueId>& work) {
        if (cone_.nodes.count(p)) return true;
        const Node& n = g_.node(p);
        if (n.opType == "Gather" && match::inDefaultDomain(n) && n.inputs.size() == 2 && n.outputs.size() == 1 &&
            n.inputs[0] != kNone && n.inputs[1] != kNone && oneIndexConstant(g_, n.inputs[1], 0)) {
            auto axes = normalizedAxes({n.attrInt("axis", 0)}, cone_.rank + 1);
            if (!axes || (*axes)[0] != cone_.axis || match::rankOf(g_, n.inputs[0]) != cone_.rank + 1) return false;
            cone_.nodes.insert(p);
            return true;
        }
        if (!isElementwiseOp(n)) return false;
        cone_.nodes.insert(p);
        for (ValueId in : n.inputs) {
            TensorPtr t = match::constantOf(g_, in);
            if (t && t->elementCount() == 1 && (int64_t)t->dims.size() <= cone_.rank) continue;
            work.push_back(in);
        }
        return true;
    }

    const Rewriter& rw_;
    const Graph& g_;
    Cone& cone_;
};

TypeInfo withUnitDim(const TypeInfo& t, int64_t rank, int64_t axis) {
    if (!t.isTensor() || !t.shape || (int64_t)t.shape->rank() != rank) return {};
    Shape s = *t.shape;
    s.dims.insert(s.dims.begin() + axis, Dim::of(1));
    return TypeInfo::tensor(t.elemType, s);
}

}  // namespace

bool unsqueezeIntoGather(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& u = g.node(id);
    if (u.inputs.empty() || u.inputs[0] == kNone) return false;
    Cone cone;
    cone.rank = match::rankOf(g, u.inputs[0]);
    if (cone.rank < 0) return false;
    auto axis = unsqueezeAxis(g, u, cone.rank);
    if (!axis) return false;
    cone.axis = *axis;
    cone.unsqueezes.insert(id);
    const ValueId seed = u.inputs[0];
    if (g.value(seed).producer == kNone) return false;
    if (!ConeBuilder(rw, cone).grow(seed)) return false;
    bool anyGather = false;
    for (NodeId n : cone.nodes) anyGather = anyGather || g.node(n).opType == "Gather";
    if (!anyGather) return false;  // unsqueeze-through-elementwise's business

    rw.setRule("unsqueeze-into-gather");
    const std::string name = u.displayName();
    const std::string why = name + " re-adds the axis " + std::to_string(cone.axis) +
                            " that scalar-index Gathers dropped, through elementwise ops: the Gathers keep it ([k] indices)";
    // Copies in topological order, each writing a value of one more dim.
    std::vector<NodeId> ordered;
    for (NodeId n : g.nodeOrder())
        if (cone.nodes.count(n)) ordered.push_back(n);
    std::map<ValueId, ValueId> moved;
    std::vector<NodeId> made;
    for (NodeId n : ordered) {
        const Node copy = g.node(n);  // addNode may move the node table
        const ValueId old = copy.outputs[0];
        const ValueId out = rw.newValue(g.value(old).name + "_keepdim", withUnitDim(g.value(old).type, cone.rank, cone.axis));
        std::vector<ValueId> in = copy.inputs;
        if (copy.opType == "Gather") {
            const int64_t k = *oneIndexConstant(g, copy.inputs[1], 0);
            in[1] = rw.newInitializer(copy.displayName() + "_index", makeTensorOf<int64_t>(DataType::Int64, {1}, {k}));
        } else {
            for (ValueId& v : in)
                if (auto it = moved.find(v); it != moved.end()) v = it->second;
        }
        made.push_back(rw.addNode(copy.opType, in, {out}, copy.attributes, {n}, why, copy.displayName()));
        moved[old] = out;
    }
    for (NodeId un : cone.unsqueezes) {
        rw.setInput(un, 0, moved.at(rw.graph().node(un).inputs[0]), why);
        rw.bypassNode(un, 0, 0, why);
    }
    for (auto it = ordered.rbegin(); it != ordered.rend(); ++it)
        if (rw.graph().hasNode(*it)) rw.eraseNode(*it, why);
    rw.restoreTopologicalOrder();
    rw.applied(made, why);
    for (NodeId n : made) revisit.push_back(n);
    return true;
}

}  // namespace passlens::passes::algebraic
