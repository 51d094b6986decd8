// box-grid-labels (shape-chain-folding): see SymbolicRewrites.h.

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "ir/Tensor.h"
#include "passes/LiveNodes.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

constexpr size_t kMaxBoxes = 64;


/// A closed interval of integers, empty when lo > hi (closed, so no bound ever overflows).
struct Interval {
    int64_t lo = 0, hi = -1;
    bool empty() const { return lo > hi; }
};

/// Every value an integer coordinate of this type can hold.
std::optional<Interval> domainOf(DataType t) {
    if (t == DataType::Int64) return Interval{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    if (t == DataType::Int32) return Interval{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    return std::nullopt;
}

/// The one element of an integer constant of type `t`.
std::optional<int64_t> intScalar(const Graph& g, ValueId v, DataType t) {
    TensorPtr c = v == kNone ? nullptr : match::constantOf(g, v);
    if (!c || c->dtype != t || c->elementCount() != 1 || c->byteSize() != elementSize(t)) return std::nullopt;
    if (t == DataType::Int64) return c->as<int64_t>()[0];
    if (t == DataType::Int32) return c->as<int32_t>()[0];
    return std::nullopt;
}

/// `coord op bound` over integers as an interval of coord.
struct Atom {
    ValueId coord = kNone;
    Interval range;
};

std::optional<Atom> atomOf(const Graph& g, ValueId v) {
    const NodeId p = g.value(v).producer;
    if (p == kNone) return std::nullopt;
    const Node& n = g.node(p);
    static const std::set<std::string> kCompares{"Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"};
    if (!match::inDefaultDomain(n) || !kCompares.count(n.opType) || n.inputs.size() != 2 || n.inputs[0] == kNone || n.inputs[1] == kNone)
        return std::nullopt;
    std::string op = n.opType;
    ValueId coord = n.inputs[0], other = n.inputs[1];
    if (match::constantOf(g, coord)) {  // k < x is x > k
        std::swap(coord, other);
        if (op == "Less") op = "Greater";
        else if (op == "Greater") op = "Less";
        else if (op == "LessOrEqual") op = "GreaterOrEqual";
        else if (op == "GreaterOrEqual") op = "LessOrEqual";
    }
    const DataType t = g.value(coord).type.elemType;
    auto domain = domainOf(t);
    auto k = intScalar(g, other, t);
    if (!domain || !k || match::constantOf(g, coord)) return std::nullopt;
    Interval r = *domain;
    if (op == "Less" || op == "Greater") {
        if (*k == (op == "Less" ? domain->lo : domain->hi)) return Atom{coord, Interval{}};  // true nowhere
        if (op == "Less") r.hi = *k - 1;
        else r.lo = *k + 1;
    } else if (op == "LessOrEqual") {
        r.hi = *k;
    } else if (op == "GreaterOrEqual") {
        r.lo = *k;
    } else {
        r.lo = r.hi = *k;
    }
    return Atom{coord, r};
}

/// The atoms of a conjunction (And trees of comparisons).
bool collectAtoms(const Graph& g, ValueId cond, std::vector<Atom>& out, int depth = 0) {
    if (cond == kNone || depth > 8) return false;
    const NodeId p = g.value(cond).producer;
    if (p != kNone && g.node(p).opType == "And" && match::inDefaultDomain(g.node(p)) && g.node(p).inputs.size() == 2)
        return collectAtoms(g, g.node(p).inputs[0], out, depth + 1) && collectAtoms(g, g.node(p).inputs[1], out, depth + 1);
    auto atom = atomOf(g, cond);
    if (!atom) return false;
    out.push_back(*atom);
    return true;
}

/// One Where of the chain: value written where coordinate 0 is in on[0] and coordinate 1 in on[1]
/// (a side no comparison bounds is the coordinate's whole domain).
struct Box {
    Interval on[2];
    bool bounded[2] = {false, false};
    TensorPtr value;
};

struct Chain {
    std::vector<NodeId> wheres;  ///< top first
    std::vector<Box> boxes;      ///< bottom first: the order of the writes
    ValueId coord[2] = {kNone, kNone};
    ValueId base = kNone;
    DataType dtype = DataType::Undefined;
};

bool supportedValueType(DataType t) {
    return t == DataType::Float || t == DataType::Double || t == DataType::Int32 || t == DataType::Int64;
}

/// The box a Where writes, its coordinates added to `coord` when new; nullopt when it is not one.
std::optional<Box> boxOf(const Graph& g, const Node& w, ValueId coord[2]) {
    if (w.opType != "Where" || !match::inDefaultDomain(w) || w.inputs.size() != 3 || w.outputs.size() != 1 || w.inputs[2] == kNone) return std::nullopt;
    TensorPtr value = match::constantOf(g, w.inputs[1]);
    if (!value || value->elementCount() != 1 || !supportedValueType(value->dtype) || value->byteSize() != elementSize(value->dtype))
        return std::nullopt;
    std::vector<Atom> atoms;
    if (!collectAtoms(g, w.inputs[0], atoms)) return std::nullopt;
    Box box;
    box.value = value;
    ValueId seen[2] = {coord[0], coord[1]};
    for (const Atom& atom : atoms) {
        int c = atom.coord == seen[0] ? 0 : atom.coord == seen[1] ? 1 : -1;
        if (c < 0) {
            if (seen[0] != kNone && seen[1] != kNone) return std::nullopt;  // a third coordinate
            c = seen[0] == kNone ? 0 : 1;
            seen[c] = atom.coord;
        }
        if (!box.bounded[c]) box.on[c] = atom.range;
        box.on[c].lo = std::max(box.on[c].lo, atom.range.lo);
        box.on[c].hi = std::min(box.on[c].hi, atom.range.hi);
        box.bounded[c] = true;
    }
    coord[0] = seen[0];
    coord[1] = seen[1];
    return box;
}

/// True when `reader` is the only node reading `v` that reaches a graph output.
bool onlyLiveReader(const Graph& g, const Liveness& live, ValueId v, NodeId reader, bool captures, const Rewriter& rw) {
    if (g.value(v).isGraphOutput || (captures && rw.isCapturedBySubgraph(v))) return false;
    for (NodeId r : g.value(v).consumers)
        if (r != reader && live.live(r)) return false;
    return true;
}

/// The Where chain ending at `top`: each Where's data is the Where below, read by nothing else
/// that is live.
Chain walkChain(const Rewriter& rw, const Liveness& live, NodeId top, bool captures) {
    const Graph& g = rw.graph();
    Chain chain;
    NodeId id = top;
    while (chain.wheres.size() < kMaxBoxes) {
        ValueId coord[2] = {chain.coord[0], chain.coord[1]};
        auto box = boxOf(g, g.node(id), coord);
        if (!box || (chain.dtype != DataType::Undefined && box->value->dtype != chain.dtype)) break;
        chain.dtype = box->value->dtype;
        chain.coord[0] = coord[0];
        chain.coord[1] = coord[1];
        chain.wheres.push_back(id);
        chain.boxes.push_back(*box);
        chain.base = g.node(id).inputs[2];
        const NodeId below = g.value(chain.base).producer;
        if (below == kNone || !onlyLiveReader(g, live, chain.base, id, captures, rw)) break;
        id = below;
    }
    // A side no comparison bounds covers the coordinate's whole domain.
    for (Box& b : chain.boxes)
        for (int c = 0; c < 2; ++c)
            if (!b.bounded[c] && chain.coord[c] != kNone) b.on[c] = *domainOf(g.value(chain.coord[c]).type.elemType);
    std::reverse(chain.boxes.begin(), chain.boxes.end());
    return chain;
}

/// The cut points of a coordinate: segment k is [cuts[k], cuts[k+1] - 1], the last one runs to
/// the domain's end. Every interval of a box is a run of whole segments.
std::vector<int64_t> cutsOf(const std::vector<Box>& boxes, int c, Interval domain) {
    std::vector<int64_t> cuts{domain.lo};
    for (const Box& b : boxes) {
        if (b.on[0].empty() || b.on[1].empty()) continue;
        cuts.push_back(b.on[c].lo);
        if (b.on[c].hi < domain.hi) cuts.push_back(b.on[c].hi + 1);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    return cuts;
}

size_t segmentOf(const std::vector<int64_t>& cuts, int64_t x) {
    return size_t(std::upper_bound(cuts.begin(), cuts.end(), x) - cuts.begin()) - 1;
}

/// The one element of a constant whose size was checked.
template <class T>
T valueOf(const Tensor& t) {
    T v;
    std::memcpy(&v, t.data.data(), sizeof(T));
    return v;
}

template <class T>
bool sameBits(T x, T y) {
    return std::memcmp(&x, &y, sizeof(T)) == 0;
}

/// x + y (or x - y) in T, as the runtime computes it; nullopt for integer overflow.
template <class T>
std::optional<T> addIn(T x, T y, bool subtract) {
    if constexpr (std::is_integral_v<T>) {
        T r;
        if (subtract ? __builtin_sub_overflow(x, y, &r) : __builtin_add_overflow(x, y, &r)) return std::nullopt;
        return r;
    } else {
        return subtract ? T(x - y) : T(x + y);
    }
}

/// cell[i][j] = row[i] + col[j] exactly in T, when the table is separable.
template <class T>
bool separate(const std::vector<std::vector<T>>& cell, std::vector<T>& row, std::vector<T>& col) {
    row.assign(cell.size(), T{});
    col = cell[0];
    for (size_t i = 0; i < cell.size(); ++i) {
        auto r = addIn<T>(cell[i][0], cell[0][0], true);
        if (!r) return false;
        row[i] = *r;
    }
    for (size_t i = 0; i < cell.size(); ++i)
        for (size_t j = 0; j < col.size(); ++j) {
            auto sum = addIn<T>(row[i], col[j], false);
            if (!sum || !sameBits(*sum, cell[i][j])) return false;
        }
    return true;
}

/// A coordinate's label as pieces: labels[k] below bounds[k] (and at or above the bound before),
/// the last label from the last bound on. Adjacent equal labels are one piece. Labels are the
/// bytes of one element of the data's type.
struct Pieces {
    std::vector<int64_t> bounds;
    std::vector<std::string> labels;
};

template <class T>
Pieces piecesOf(const std::vector<int64_t>& cuts, const std::vector<T>& labels) {
    Pieces p;
    for (size_t k = 0; k < labels.size(); ++k) {
        const std::string bytes(reinterpret_cast<const char*>(&labels[k]), sizeof(T));
        if (!p.labels.empty() && p.labels.back() == bytes) {
            if (k + 1 < labels.size()) p.bounds.back() = cuts[k + 1];
            continue;
        }
        p.labels.push_back(bytes);
        if (k + 1 < labels.size()) p.bounds.push_back(cuts[k + 1]);
    }
    if (p.bounds.size() == p.labels.size()) p.bounds.pop_back();  // the last piece runs to the end
    return p;
}

/// The numpy broadcast of two shapes when it is provable for every binding: each axis 1 on one
/// side or the same expression on both.
std::optional<std::vector<shape::DimExpr>> broadcastOf(const std::vector<shape::DimExpr>& x, const std::vector<shape::DimExpr>& y) {
    const size_t rank = std::max(x.size(), y.size());
    std::vector<shape::DimExpr> out(rank);
    for (size_t k = 0; k < rank; ++k) {
        const shape::DimExpr* dx = k < x.size() ? &x[x.size() - 1 - k] : nullptr;
        const shape::DimExpr* dy = k < y.size() ? &y[y.size() - 1 - k] : nullptr;
        shape::DimExpr& d = out[rank - 1 - k];
        if (!dx || dx->constantValue() == 1) d = *dy;
        else if (!dy || dy->constantValue() == 1 || *dx == *dy) d = *dx;
        else return std::nullopt;
    }
    return out;
}


/// A chain that qualifies: its table split into one label per coordinate.
struct Plan {
    Chain chain;
    Pieces pieces[2];
    size_t cells[2] = {0, 0};
};

/// The labels of a chain's grid, when every cell is a row part plus a column part in T.
template <class T>
std::optional<Plan> planIn(const Graph& g, const Chain& chain) {
    Interval domain[2];
    std::vector<int64_t> cuts[2];
    for (int c = 0; c < 2; ++c) {
        domain[c] = *domainOf(g.value(chain.coord[c]).type.elemType);
        cuts[c] = cutsOf(chain.boxes, c, domain[c]);
    }
    std::vector<std::vector<std::optional<T>>> written(cuts[0].size(), std::vector<std::optional<T>>(cuts[1].size()));
    for (const Box& b : chain.boxes) {
        if (b.on[0].empty() || b.on[1].empty()) continue;  // writes no cell
        const T v = valueOf<T>(*b.value);
        for (size_t i = segmentOf(cuts[0], b.on[0].lo); i <= segmentOf(cuts[0], b.on[0].hi); ++i)
            for (size_t j = segmentOf(cuts[1], b.on[1].lo); j <= segmentOf(cuts[1], b.on[1].hi); ++j) written[i][j] = v;
    }
    // Cells no box writes keep the data: only a data of one known value fills them.
    TensorPtr baseFill;
    std::vector<std::vector<T>> cell(cuts[0].size(), std::vector<T>(cuts[1].size()));
    for (size_t i = 0; i < cell.size(); ++i)
        for (size_t j = 0; j < cell[i].size(); ++j) {
            if (!written[i][j]) {
                if (!baseFill) baseFill = uniformFill(g, chain.base);
                if (!baseFill || baseFill->dtype != chain.dtype) return std::nullopt;
                written[i][j] = valueOf<T>(*baseFill);
            }
            cell[i][j] = *written[i][j];
        }
    std::vector<T> labels[2];
    if (!separate(cell, labels[0], labels[1])) return std::nullopt;
    Plan plan;
    for (int c = 0; c < 2; ++c) {
        plan.pieces[c] = piecesOf(cuts[c], labels[c]);
        plan.cells[c] = cuts[c].size();
        // A label that does not vary leaves the result without that coordinate's shape.
        if (plan.pieces[c].labels.size() < 2) return std::nullopt;
    }
    plan.chain = chain;
    return plan;
}

std::optional<Plan> planOf(const Graph& g, const Chain& chain) {
    switch (chain.dtype) {
    case DataType::Float: return planIn<float>(g, chain);
    case DataType::Double: return planIn<double>(g, chain);
    case DataType::Int32: return planIn<int32_t>(g, chain);
    case DataType::Int64: return planIn<int64_t>(g, chain);
    default: return std::nullopt;
    }
}

/// "coordinate|dtype|bounds|labels": equal keys, equal label values.
std::string labelKey(const Chain& chain, int c, const Pieces& p) {
    std::string key = std::to_string(chain.coord[c]) + "|" + std::to_string(int(chain.dtype)) + "|";
    for (int64_t b : p.bounds) key += std::to_string(b) + ",";
    for (const std::string& l : p.labels) key += "|" + l;
    return key;
}

/// Builds each distinct label once: the shifted blocks of a stage write the same grid over the
/// same coordinates.
class LabelBuilder {
public:
    explicit LabelBuilder(Rewriter& rw) : rw_(rw) {}

    /// Where(coord < b0, l0, Where(coord < b1, l1, ... l_last)).
    ValueId label(const Chain& chain, int c, const Pieces& p, NodeId origin) {
        const std::string key = labelKey(chain, c, p);
        if (auto it = built_.find(key); it != built_.end()) return it->second;
        origin_ = origin;
        name_ = rw_.graph().node(origin).displayName();
        const ValueId coord = chain.coord[c];
        const DataType coordType = rw_.graph().value(coord).type.elemType;
        ValueId v = scalar(chain.dtype, p.labels.back());
        for (size_t k = p.bounds.size(); k-- > 0;) {
            ValueId below = rw_.newValue("grid_side", TypeInfo::tensor(DataType::Bool));
            const int32_t narrow = int32_t(p.bounds[k]);  // an int32 coordinate's bounds fit int32
            add("Less", {coord, coordType == DataType::Int32 ? scalar(coordType, std::string((const char*)&narrow, 4))
                                                             : scalar(coordType, std::string((const char*)&p.bounds[k], 8))},
                below);
            ValueId out = rw_.newValue("grid_label", TypeInfo::tensor(chain.dtype));
            add("Where", {below, scalar(chain.dtype, p.labels[k]), v}, out);
            v = out;
        }
        return built_[key] = v;
    }

    /// Nodes label() adds for a label not built yet.
    static size_t cost(const Pieces& p) { return 2 * p.bounds.size(); }

private:
    ValueId scalar(DataType t, const std::string& bytes) {
        return rw_.newInitializer("grid_label_value", makeTensor(t, {}, bytes.data(), bytes.size()));
    }

    void add(const char* op, std::vector<ValueId> inputs, ValueId out) {
        rw_.addNode(op, std::move(inputs), {out}, {}, {origin_}, "computes one coordinate's part of a box grid's labels",
                    name_ + "_label_" + op);
    }

    Rewriter& rw_;
    NodeId origin_ = kNone;
    std::string name_;
    std::map<std::string, ValueId> built_;
};

void rewrite(Rewriter& rw, LabelBuilder& builder, const Plan& plan) {
    const Graph& g = rw.graph();
    const Chain& chain = plan.chain;
    const NodeId top = chain.wheres.front();
    const ValueId out = g.node(top).outputs[0];
    const std::string name = g.node(top).displayName();
    const ValueId first = builder.label(chain, 0, plan.pieces[0], top);
    const ValueId second = builder.label(chain, 1, plan.pieces[1], top);
    const std::string why = name + " ends a chain of " + std::to_string(chain.wheres.size()) + " box writes over a " +
                            std::to_string(plan.cells[0]) + " x " + std::to_string(plan.cells[1]) + " grid of '" +
                            g.value(chain.coord[0]).name + "' and '" + g.value(chain.coord[1]).name +
                            "' intervals whose every value is a part of the first plus a part of the second";
    // The Wheres below may still have dead readers (the exporter's Shape chains): dce takes them.
    const NodeId add = rw.replaceNodes({top}, "Add", {first, second}, {out}, {}, why, name);
    rw.applied({add}, why);
}

/// The result keeps the original's shape: broadcasting the two coordinates gives it.
bool keepsShape(const shape::ShapeAnalysis& a, const Chain& chain, ValueId out) {
    auto x = knownDims(a, chain.coord[0]), y = knownDims(a, chain.coord[1]), o = knownDims(a, out);
    if (!x || !y || !o) return false;
    auto both = broadcastOf(*x, *y);
    return both && *both == *o;
}

}  // namespace

void rewriteBoxGridLabels(Rewriter& rw, bool captures) {
    const Graph& g = rw.graph();
    // Where over numbers and Less on int32/int64 (9).
    if (rw.model().opsetFor("") < 9) return;
    std::optional<shape::ShapeAnalysis> a;  // made once, when the first chain qualifies by its values
    std::optional<Liveness> live;           // made once, at the first Where
    std::set<NodeId> taken;                 // Wheres of a chain already planned
    std::vector<Plan> plans;
    const std::vector<NodeId> order = g.nodeOrder();
    // Last to first: a chain's top comes before the Wheres below it, which it takes with it.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        if (g.node(*it).opType != "Where") continue;
        if (!live) live.emplace(g);
        if (!live->live(*it) || taken.count(*it)) continue;  // dead code, or below a planned chain
        Chain chain = walkChain(rw, *live, *it, captures);
        if (chain.wheres.empty() || chain.coord[1] == kNone) continue;
        const ValueId out = g.node(*it).outputs[0];
        if (g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) continue;
        auto plan = planOf(g, chain);
        if (!plan) continue;
        if (!a) a = shape::analyzeShapes(g, &rw.model());
        if (!keepsShape(*a, chain, out)) continue;
        taken.insert(chain.wheres.begin(), chain.wheres.end());
        plans.push_back(std::move(*plan));
    }
    if (plans.empty()) return;
    // Rewrite only when fewer nodes come than go, counted over all the chains at once: blocks
    // that share their comparisons free them only together. Each distinct label costs its
    // comparisons and Wheres once, each chain one Add.
    std::set<std::string> labels;
    std::vector<NodeId> tops;
    size_t added = 0;
    for (const Plan& p : plans) {
        tops.push_back(p.chain.wheres.front());
        added += 1;
        for (int c = 0; c < 2; ++c)
            if (labels.insert(labelKey(p.chain, c, p.pieces[c])).second) added += LabelBuilder::cost(p.pieces[c]);
    }
    const size_t removed = exclusiveNodes(rw, *live, tops, captures);
    rw.setRule("box-grid-labels");
    if (added >= removed) {
        rw.missed(tops, "not rewritten: the labels would add " + std::to_string(added) + " nodes where the box writes free " +
                            std::to_string(removed));
        return;
    }
    LabelBuilder builder(rw);
    for (const Plan& p : plans) rewrite(rw, builder, p);
    rw.restoreTopologicalOrder();
}

}  // namespace passlens::passes
