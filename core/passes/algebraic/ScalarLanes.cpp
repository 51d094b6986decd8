// scalar-lanes-to-vector: a 1-D Concat of scalars (each an Unsqueeze or a Reshape to [1]) that
// parallel chains of the same elementwise ops compute, each chain starting from one element of
// a shared vector (Gather(v, i), i constant), is that chain run once over the vector of those
// elements. Exporters write `[floor(h * s), floor(w * s)]` (torchvision's resize) and
// `[rw, rh, rw, rh]` (its box rescale) element by element; over vectors they cost one node per
// op instead of one per op per element. An elementwise op computes each element alone, so the
// vector chain holds, element for element, exactly what each scalar chain held (same inputs, same
// rounding). Operands every chain shares stay scalars (they broadcast); different scalar
// constants become one constant vector. A chain's value that something else reads becomes
// Gather(vector, lane); lanes are ordered so the chains' gathers are the vector itself when they
// can be, and one Gather puts repeated or permuted elements in the Concat's order. Applied only
// when fewer nodes remain.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Equality.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

constexpr int kMaxDepth = 12;
constexpr size_t kMaxPositions = 48;

bool isDefaultOp(const Node& n, const char* op) { return n.opType == op && match::inDefaultDomain(n); }

/// One place in the chains, the same in every lane: what each lane holds there.
struct Position {
    enum class Kind { Shared, Gathered, Constants, Op } kind = Kind::Op;
    std::vector<ValueId> lanes;      ///< the value of each lane
    ValueId source = kNone;          ///< Shared: the value; Gathered: the vector gathered from
    std::vector<int64_t> indices;    ///< Gathered: each lane's element of `source`
    std::vector<size_t> operands;    ///< Op: positions of the inputs
};

/// Matches the lanes' chains position by position (memoized: a value read twice in a chain is
/// one position).
class LaneMatcher {
public:
    explicit LaneMatcher(const Graph& g) : g_(g) {}

    std::optional<size_t> match(const std::vector<ValueId>& vals, int depth) {
        if (auto it = memo_.find(vals); it != memo_.end()) return it->second;
        if (depth > kMaxDepth || positions_.size() >= kMaxPositions) return std::nullopt;
        for (ValueId v : vals)
            if (v == kNone || g_.value(v).rank() != size_t(0)) return std::nullopt;  // scalars only
        Position p;
        p.lanes = vals;
        if (std::all_of(vals.begin(), vals.end(), [&](ValueId v) { return v == vals[0]; })) {
            p.kind = Position::Kind::Shared;
            p.source = vals[0];
            return add(std::move(p));
        }
        const DataType type = g_.value(vals[0]).type.elemType;
        for (ValueId v : vals)
            if (g_.value(v).type.elemType != type || type == DataType::Undefined) return std::nullopt;
        if (allConstants(vals)) {
            p.kind = Position::Kind::Constants;
            return add(std::move(p));
        }
        std::vector<const Node*> nodes;
        for (ValueId v : vals) {
            const NodeId id = g_.value(v).producer;
            if (id == kNone || g_.node(id).hasSubgraphs()) return std::nullopt;
            nodes.push_back(&g_.node(id));
        }
        if (gathered(nodes, p)) return add(std::move(p));
        const Node& first = *nodes[0];
        if (!isElementwiseOp(first)) return std::nullopt;
        for (const Node* n : nodes)
            if (n->opType != first.opType || n->domain != first.domain || n->inputs.size() != first.inputs.size() ||
                !sameAttributes(n->attributes, first.attributes))
                return std::nullopt;
        for (size_t slot = 0; slot < first.inputs.size(); ++slot) {
            std::vector<ValueId> operand;
            for (const Node* n : nodes) operand.push_back(n->inputs[slot]);
            auto q = match(operand, depth + 1);
            if (!q) return std::nullopt;
            p.operands.push_back(*q);
        }
        p.kind = Position::Kind::Op;
        memo_[vals] = positions_.size();
        positions_.push_back(std::move(p));
        return positions_.size() - 1;
    }

    std::vector<Position>& positions() { return positions_; }

private:
    size_t add(Position p) {
        memo_[p.lanes] = positions_.size();
        positions_.push_back(std::move(p));
        return positions_.size() - 1;
    }

    bool allConstants(const std::vector<ValueId>& vals) const {
        TensorPtr first = match::constantOf(g_, vals[0]);
        for (ValueId v : vals) {
            TensorPtr t = match::constantOf(g_, v);
            if (!t || !first || t->elementCount() != 1 || t->dtype != first->dtype || t->dtype == DataType::String ||
                t->data.bytes().empty() || t->data.bytes().size() != first->data.bytes().size())
                return false;  // one element each, its bytes at hand (not external data) and of one width
        }
        return true;
    }

    /// Every lane is Gather(source, i) of one 1-D vector of known length with a constant scalar i.
    bool gathered(const std::vector<const Node*>& nodes, Position& p) const {
        for (const Node* n : nodes) {
            if (!isDefaultOp(*n, "Gather") || n->inputs.size() != 2 || n->inputs[0] == kNone || n->inputs[1] == kNone ||
                n->inputs[0] != nodes[0]->inputs[0])
                return false;
            const int64_t axis = n->attrInt("axis", 0);
            if (axis != 0 && axis != -1) return false;
        }
        const ValueId source = nodes[0]->inputs[0];
        auto dims = g_.value(source).staticDims();
        if (!dims || dims->size() != 1) return false;
        const int64_t length = (*dims)[0];
        for (const Node* n : nodes) {
            auto i = oneIndexConstant(g_, n->inputs[1], 0);
            if (!i || *i < -length || *i >= length) return false;  // out of range: the original fails at run time
            p.indices.push_back(*i < 0 ? *i + length : *i);
        }
        p.kind = Position::Kind::Gathered;
        p.source = source;
        return true;
    }

    const Graph& g_;
    std::vector<Position> positions_;
    std::map<std::vector<ValueId>, size_t> memo_;
};

/// The scalar a Concat input holds when it is Unsqueeze(s, [0]) or Reshape(s, [1]) of a rank-0 s.
ValueId laneScalar(const Graph& g, ValueId in) {
    const NodeId p = in == kNone ? kNone : g.value(in).producer;
    if (p == kNone) return kNone;
    const Node& n = g.node(p);
    if (n.inputs.empty() || n.inputs[0] == kNone || g.value(n.inputs[0]).rank() != size_t(0)) return kNone;
    if (isDefaultOp(n, "Unsqueeze")) {
        auto axes = intsFromAttrOrInput(g, n, "axes", 1);
        return axes && axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1) ? n.inputs[0] : kNone;
    }
    if (isDefaultOp(n, "Reshape") && n.inputs.size() == 2) {
        auto target = constantInts(g, n.inputs[1]);
        return target && target->size() == 1 && ((*target)[0] == 1 || (*target)[0] == -1) ? n.inputs[0] : kNone;
    }
    return kNone;
}

/// Sorts the lanes so that the Gathered positions' indices ascend (the gathers then are often
/// the vector itself); returns the permutation applied (new lane → old lane).
std::vector<size_t> sortLanes(std::vector<Position>& positions, size_t lanes) {
    std::vector<size_t> order(lanes);
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](size_t lane) {
        std::vector<int64_t> k;
        for (const Position& p : positions)
            if (p.kind == Position::Kind::Gathered) k.push_back(p.indices[lane]);
        return k;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    for (Position& p : positions) {
        std::vector<ValueId> lanesNow;
        std::vector<int64_t> indicesNow;
        for (size_t old : order) {
            lanesNow.push_back(p.lanes[old]);
            if (!p.indices.empty()) indicesNow.push_back(p.indices[old]);
        }
        p.lanes = std::move(lanesNow);
        p.indices = std::move(indicesNow);
    }
    return order;
}

bool isIdentity(const std::vector<int64_t>& idx, int64_t length) {
    if ((int64_t)idx.size() != length) return false;
    for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i] != (int64_t)i) return false;
    return true;
}

TensorPtr int64Vector(const std::vector<int64_t>& v) { return makeTensorOf<int64_t>(DataType::Int64, {(int64_t)v.size()}, v); }

/// What the rewrite costs and saves, and which lane values other nodes read.
struct Plan {
    std::set<NodeId> laneOps;                                ///< the scalar chains' op nodes (all go)
    std::set<NodeId> dyingGathers;                           ///< leaf Gathers only the chains read
    std::vector<std::pair<size_t, size_t>> extracted;        ///< (position, lane) read elsewhere
    int added = 0, removed = 0;
};

}  // namespace

bool vectorizeScalarLanes(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& concat = g.node(id);
    if (!isDefaultOp(concat, "Concat") || concat.inputs.size() < 2 || concat.outputs.size() != 1 || concat.outputs[0] == kNone)
        return false;
    const int64_t axis = concat.attrInt("axis", 0);
    if ((axis != 0 && axis != -1) || g.value(concat.outputs[0]).rank() != size_t(1)) return false;
    // Lanes: the distinct scalars, in first-appearance order; `slotLane[j]` is input j's lane.
    std::vector<ValueId> lanes;
    std::vector<size_t> slotLane;
    std::set<NodeId> roots;
    for (ValueId in : concat.inputs) {
        const ValueId s = laneScalar(g, in);
        if (s == kNone) return false;
        for (NodeId c : g.value(in).consumers)
            if (c != id) return false;
        if (g.value(in).isGraphOutput || rw.isCapturedBySubgraph(in)) return false;
        roots.insert(g.value(in).producer);
        auto it = std::find(lanes.begin(), lanes.end(), s);
        slotLane.push_back(size_t(it - lanes.begin()));
        if (it == lanes.end()) lanes.push_back(s);
    }
    if (lanes.size() < 2) return false;
    LaneMatcher matcher(g);
    auto rootPos = matcher.match(lanes, 0);
    if (!rootPos) return false;
    std::vector<Position>& positions = matcher.positions();
    const size_t m = lanes.size();
    const std::vector<size_t> order = sortLanes(positions, m);
    std::vector<size_t> laneOf(m);  // old lane → new lane
    for (size_t k = 0; k < m; ++k) laneOf[order[k]] = k;
    std::vector<int64_t> finalOrder;  // Concat element j = lane finalOrder[j] of the root vector
    for (size_t l : slotLane) finalOrder.push_back((int64_t)laneOf[l]);

    Plan plan;
    for (const Position& p : positions)
        if (p.kind == Position::Kind::Op)
            for (ValueId v : p.lanes) plan.laneOps.insert(g.value(v).producer);
    auto insideChains = [&](NodeId c) { return plan.laneOps.count(c) || roots.count(c); };
    for (size_t pi = 0; pi < positions.size(); ++pi) {
        const Position& p = positions[pi];
        if (p.kind == Position::Kind::Gathered) {
            for (ValueId v : p.lanes) {
                const bool onlyChains = !g.value(v).isGraphOutput && !rw.isCapturedBySubgraph(v) &&
                                        std::all_of(g.value(v).consumers.begin(), g.value(v).consumers.end(), insideChains);
                if (onlyChains) plan.dyingGathers.insert(g.value(v).producer);
            }
            const auto length = g.value(p.source).staticDims()->at(0);
            if (pi != *rootPos && !isIdentity(p.indices, length)) ++plan.added;
        } else if (p.kind == Position::Kind::Op) {
            for (size_t lane = 0; lane < m; ++lane) {
                const ValueId v = p.lanes[lane];
                if (g.value(v).isGraphOutput || rw.isCapturedBySubgraph(v)) return false;
                if (!std::all_of(g.value(v).consumers.begin(), g.value(v).consumers.end(), insideChains))
                    plan.extracted.emplace_back(pi, lane);
            }
            ++plan.added;
        }
    }
    const Position& root = positions[*rootPos];
    if (root.kind == Position::Kind::Shared || root.kind == Position::Kind::Constants) return false;  // constant folding's
    const bool rootInPlace = root.kind == Position::Kind::Op && isIdentity(finalOrder, (int64_t)m);
    if (!rootInPlace) ++plan.added;  // the Gather that writes the Concat's order
    plan.added += (int)plan.extracted.size();
    plan.removed = (int)(plan.laneOps.size() + plan.dyingGathers.size() + roots.size()) + 1;
    if (plan.added >= plan.removed) return false;

    rw.setRule("scalar-lanes-to-vector");
    const std::string name = concat.displayName();
    const std::string why = name + " concatenates " + std::to_string(m) +
                            " scalars computed by parallel elementwise chains from elements of one vector: the chain runs once over the vector";
    const bool shapeSlices = pattern::defaultOpset(rw.model()) >= 15;
    std::vector<ValueId> vec(positions.size(), kNone);
    auto vectorType = [&](DataType t) { return TypeInfo::tensor(t, Shape{{Dim::of((int64_t)m)}}); };
    // The elements `idx` of `source` as a vector (a Shape slice when `source` is a Shape and the
    // elements are contiguous: equal slices merge).
    auto gatherInto = [&](ValueId source, const std::vector<int64_t>& idx, ValueId out, bool replaceConcat) -> NodeId {
        const NodeId sp = g.value(source).producer;
        bool contiguous = !idx.empty();
        for (size_t i = 1; i < idx.size(); ++i) contiguous = contiguous && idx[i] == idx[0] + (int64_t)i;
        std::string op = "Gather";
        std::vector<ValueId> in{source, rw.newInitializer(name + "_lanes", int64Vector(idx))};
        std::vector<Attribute> attrs;
        if (shapeSlices && contiguous && sp != kNone && isDefaultOp(g.node(sp), "Shape") && !g.node(sp).inputs.empty() &&
            g.node(sp).attrInt("start", 0) >= 0 && !g.node(sp).attr("end")) {
            const int64_t start = g.node(sp).attrInt("start", 0) + idx[0];
            op = "Shape";
            in = {g.node(sp).inputs[0]};
            attrs = {Attribute::makeInt("start", start), Attribute::makeInt("end", start + (int64_t)idx.size())};
        }
        if (replaceConcat) return rw.replaceNodes({id}, op, in, {out}, attrs, why, name);
        return rw.addNode(op, in, {out}, attrs, {}, why, name + "_lanes");
    };
    const ValueId concatOut = concat.outputs[0];
    const std::vector<ValueId> concatInputs = concat.inputs;  // `concat` goes with the first replaceNodes
    NodeId result = kNone;
    for (size_t pi = 0; pi < positions.size(); ++pi) {
        const Position& p = positions[pi];
        const DataType type = g.value(p.lanes[0]).type.elemType;
        switch (p.kind) {
        case Position::Kind::Shared: vec[pi] = p.source; break;
        case Position::Kind::Constants: {
            std::string bytes;
            for (ValueId v : p.lanes) {
                auto b = match::constantOf(g, v)->data.bytes();
                bytes.append(reinterpret_cast<const char*>(b.data()), b.size());
            }
            vec[pi] = rw.newInitializer(name + "_lane_constants", makeTensor(type, {(int64_t)m}, bytes.data(), bytes.size()));
            break;
        }
        case Position::Kind::Gathered: {
            if (pi == *rootPos) {
                std::vector<int64_t> idx;
                for (int64_t lane : finalOrder) idx.push_back(p.indices[(size_t)lane]);
                result = gatherInto(p.source, idx, concatOut, true);
            } else if (isIdentity(p.indices, g.value(p.source).staticDims()->at(0))) {
                vec[pi] = p.source;
            } else {
                vec[pi] = rw.newValue(name + "_lanes", vectorType(type));
                gatherInto(p.source, p.indices, vec[pi], false);
            }
            break;
        }
        case Position::Kind::Op: {
            const Node exemplar = g.node(g.value(p.lanes[0]).producer);  // addNode may move the node table
            std::vector<ValueId> in;
            for (size_t q : p.operands) in.push_back(vec[q]);
            std::vector<NodeId> replaces;
            for (ValueId v : p.lanes) replaces.push_back(g.value(v).producer);
            if (pi == *rootPos && rootInPlace) {
                result = rw.replaceNodes({id}, exemplar.opType, in, {concatOut}, exemplar.attributes, why, name);
                vec[pi] = concatOut;
            } else {
                vec[pi] = rw.newValue(exemplar.displayName() + "_lanes", vectorType(type));
                rw.addNode(exemplar.opType, in, {vec[pi]}, exemplar.attributes, replaces, why, exemplar.displayName() + "_lanes");
            }
            break;
        }
        }
    }
    if (result == kNone)  // the root vector in the Concat's order
        result = rw.replaceNodes({id}, "Gather", {vec[*rootPos], rw.newInitializer(name + "_order", int64Vector(finalOrder))},
                                 {concatOut}, {}, why, name);
    // Readers outside the chains take their lane's element.
    for (auto [pi, lane] : plan.extracted) {
        const ValueId v = positions[pi].lanes[lane];
        const ValueId e = rw.newValue(rw.graph().value(v).name + "_lane", rw.graph().value(v).type);
        rw.addNode("Gather", {vec[pi], rw.newInitializer(name + "_lane", makeTensorOf<int64_t>(DataType::Int64, {}, {(int64_t)lane}))},
                   {e}, {}, {}, why, rw.graph().value(v).name + "_lane");
        const std::vector<NodeId> readers = rw.graph().value(v).consumers;
        for (NodeId c : std::set<NodeId>(readers.begin(), readers.end())) {
            if (insideChains(c)) continue;
            const std::vector<ValueId> ins = rw.graph().node(c).inputs;
            for (size_t slot = 0; slot < ins.size(); ++slot)
                if (ins[slot] == v) rw.setInput(c, slot, e, why);
        }
    }
    for (ValueId in : std::set<ValueId>(concatInputs.begin(), concatInputs.end())) eraseDeadChain(rw, in, why);
    rw.restoreTopologicalOrder();
    rw.applied({result}, why);
    revisit.push_back(result);
    return true;
}

bool vectorizeLanesOfReader(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (!(isDefaultOp(n, "Unsqueeze") || isDefaultOp(n, "Reshape")) || n.outputs.size() != 1 || n.outputs[0] == kNone) return false;
    const auto& readers = g.value(n.outputs[0]).consumers;
    if (readers.empty() || !std::all_of(readers.begin(), readers.end(), [&](NodeId r) { return r == readers[0]; })) return false;
    if (!isDefaultOp(g.node(readers[0]), "Concat") || laneScalar(g, n.outputs[0]) == kNone) return false;
    return vectorizeScalarLanes(rw, readers[0], revisit);
}

}  // namespace passlens::passes::algebraic
