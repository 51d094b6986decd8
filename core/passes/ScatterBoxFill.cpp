// scatter-fill-noop and scatter-box-to-where (shape-chain-folding): see SymbolicRewrites.h.

#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "ir/Tensor.h"
#include "passes/SymbolicRewrites.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

constexpr int64_t kToTheEnd = std::numeric_limits<int64_t>::max();

const Node* producerOf(const Graph& g, ValueId v, const char* op) {
    if (v == kNone || g.value(v).producer == kNone) return nullptr;
    const Node& n = g.node(g.value(v).producer);
    if (n.opType != op || !(n.domain.empty() || n.domain == "ai.onnx")) return nullptr;
    return &n;
}

/// The elements of a small integer tensor when the shape engine knows every one as a number
/// (initializers, Constant nodes and folded chains alike).
std::optional<std::vector<int64_t>> knownInts(const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size() || !a.of(v).values) return std::nullopt;
    std::vector<int64_t> out;
    for (const shape::Dim& e : *a.of(v).values) {
        auto c = e ? e->constantValue() : std::nullopt;
        if (!c) return std::nullopt;
        out.push_back(*c);
    }
    return out;
}

std::optional<std::vector<int64_t>> intsOf(const shape::ShapeAnalysis& a, const Node& n, const char* attr, size_t slot) {
    if (const Attribute* at = n.attr(attr)) return at->ints;
    return slot < n.inputs.size() ? knownInts(a, n.inputs[slot]) : std::nullopt;
}

bool isOneOf(const std::optional<std::vector<int64_t>>& v, std::initializer_list<int64_t> allowed) {
    if (!v || v->size() != 1) return false;
    for (int64_t x : allowed)
        if ((*v)[0] == x) return true;
    return false;
}

/// The known dims of a value ({} when its rank or a dim is unknown).
std::vector<shape::DimExpr> dimsOf(const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size() || !a.of(v).dims) return {};
    std::vector<shape::DimExpr> out;
    for (const shape::Dim& d : *a.of(v).dims) {
        if (!d) return {};
        out.push_back(*d);
    }
    return out;
}

}  // namespace

/// The fill of a ConstantOfShape: its `value` (one element), float32 0 when absent.
static TensorPtr fillOf(const Node& n) {
    if (const Attribute* at = n.attr("value")) return at->kind == AttrKind::Tensor && at->t && at->t->elementCount() == 1 ? at->t : nullptr;
    return floatTensor({1}, {0.f});
}

/// The one value every element of `v` holds, when that is evident: a ConstantOfShape or a
/// constant with equal elements, seen through ops that only move or repeat elements.
TensorPtr uniformFill(const Graph& g, ValueId v) {
    for (int depth = 0; depth < 8 && v != kNone; ++depth) {
        if (TensorPtr c = match::constantOf(g, v)) {
            const size_t size = elementSize(c->dtype), count = (size_t)c->elementCount();
            if (c->dtype == DataType::String || size == 0 || count == 0 || c->byteSize() != size * count) return nullptr;
            for (size_t i = 1; i < count; ++i)
                if (std::memcmp(c->data.data(), c->data.data() + i * size, size) != 0) return nullptr;
            return makeTensor(c->dtype, {1}, c->data.data(), size);
        }
        const NodeId p = g.value(v).producer;
        if (p == kNone) return nullptr;
        const Node& n = g.node(p);
        if (!(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.empty()) return nullptr;
        if (n.opType == "ConstantOfShape") return fillOf(n);
        static const std::set<std::string> kMovers{"Reshape", "Expand", "Unsqueeze", "Squeeze", "Identity", "Flatten"};
        if (!kMovers.count(n.opType)) return nullptr;
        v = n.inputs[0];
    }
    return nullptr;
}

namespace {

bool sameFill(const Tensor& x, const Tensor& y) {
    return x.dtype == y.dtype && x.byteSize() == y.byteSize() && x.elementCount() == 1 && y.elementCount() == 1 &&
           std::memcmp(x.data.data(), y.data.data(), x.byteSize()) == 0;
}

/// Indices [start, end) of Range(0, limit, 1) kept by a Slice with constant bounds and step 1:
/// the positions i of a dim of size `limit` with start <= i < end in Slice's clamped sense.
struct Box1 {
    ValueId range = kNone, limit = kNone;
    uint64_t length = 0;  ///< the DimExpr id of the Range's length: equal ids, equal Ranges
    int64_t start = 0, end = kToTheEnd;
};

std::optional<Box1> sliceOfRange(const Graph& g, const shape::ShapeAnalysis& a, ValueId v, const shape::DimExpr& dim) {
    Box1 box;
    ValueId r = v;
    if (const Node* sl = producerOf(g, v, "Slice")) {
        auto starts = intsOf(a, *sl, "starts", 1), ends = intsOf(a, *sl, "ends", 2);
        if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
        const bool hasAxes = sl->attr("axes") || (sl->inputs.size() > 3 && sl->inputs[3] != kNone);
        if (hasAxes && !isOneOf(intsOf(a, *sl, "axes", 3), {0, -1})) return std::nullopt;
        if (sl->inputs.size() > 4 && sl->inputs[4] != kNone && !isOneOf(knownInts(a, sl->inputs[4]), {1})) return std::nullopt;
        box.start = (*starts)[0];
        box.end = (*ends)[0];
        r = sl->inputs[0];
    }
    const Node* range = producerOf(g, r, "Range");
    if (!range || range->inputs.size() != 3 || !isOneOf(knownInts(a, range->inputs[0]), {0}) ||
        !isOneOf(knownInts(a, range->inputs[2]), {1}))
        return std::nullopt;
    const auto rangeDims = dimsOf(a, r);
    if (rangeDims.size() != 1 || rangeDims[0] != dim || a.of(r).dtype != DataType::Int64) return std::nullopt;
    box.range = r;
    box.limit = range->inputs[1];
    box.length = dim.id();
    return box;
}

/// The 1-D vector a grid side repeats: rows come as Reshape(v, [-1, 1]) or Unsqueeze(v, 1),
/// columns as v itself, each then Expand-ed to the grid and Unsqueeze-d on the last axis.
ValueId gridSide(const Graph& g, const shape::ShapeAnalysis& a, ValueId part, bool rows, ValueId* expanded) {
    const Node* u = producerOf(g, part, "Unsqueeze");
    if (!u || !isOneOf(intsOf(a, *u, "axes", 1), {-1, 2})) return kNone;
    // The Expand is gone when the grid has one column (expand-noop-symbolic): the caller checks
    // that what is unsqueezed has the grid's shape either way.
    *expanded = u->inputs[0];
    const Node* ex = producerOf(g, u->inputs[0], "Expand");
    ValueId src = ex ? ex->inputs[0] : u->inputs[0];
    if (!rows) return dimsOf(a, src).size() == 1 ? src : kNone;
    if (const Node* r = producerOf(g, src, "Reshape")) {
        auto target = knownInts(a, r->inputs.size() > 1 ? r->inputs[1] : kNone);
        if (!target || *target != std::vector<int64_t>{-1, 1}) return kNone;
        src = r->inputs[0];
    } else if (const Node* us = producerOf(g, src, "Unsqueeze")) {
        if (!isOneOf(intsOf(a, *us, "axes", 1), {1, -1})) return kNone;
        src = us->inputs[0];
    } else {
        return kNone;
    }
    return dimsOf(a, src).size() == 1 ? src : kNone;
}

struct ScatterBox {
    Box1 rows, cols;
    TensorPtr fill;
};

/// ScatterND(data [D0, D1], grid(rows, cols), ConstantOfShape(k)) with rows and cols Slices of
/// Range(0, D0) and Range(0, D1): the box rows × cols of data set to k.
std::optional<ScatterBox> matchBox(const Graph& g, const shape::ShapeAnalysis& a, const Node& n) {
    const auto data = dimsOf(a, n.inputs[0]);
    if (data.size() != 2) return std::nullopt;
    const Node* cat = producerOf(g, n.inputs[1], "Concat");
    if (!cat || cat->inputs.size() != 2 || !isOneOf(std::vector<int64_t>{cat->attrInt("axis", 0)}, {-1, 2})) return std::nullopt;
    ValueId rowGrid = kNone, colGrid = kNone;
    const ValueId rowVec = gridSide(g, a, cat->inputs[0], true, &rowGrid);
    const ValueId colVec = gridSide(g, a, cat->inputs[1], false, &colGrid);
    if (rowVec == kNone || colVec == kNone) return std::nullopt;
    // Both grids and the updates are [len(rows), len(cols)]: every (row, col) pair is written once.
    const std::vector<shape::DimExpr> grid{dimsOf(a, rowVec)[0], dimsOf(a, colVec)[0]};
    if (dimsOf(a, rowGrid) != grid || dimsOf(a, colGrid) != grid || dimsOf(a, n.inputs[2]) != grid) {
        return std::nullopt;
    }
    auto rows = sliceOfRange(g, a, rowVec, data[0]);
    auto cols = sliceOfRange(g, a, colVec, data[1]);
    TensorPtr fill = uniformFill(g, n.inputs[2]);
    if (!rows || !cols || !fill || fill->dtype != g.value(n.inputs[0]).type.elemType) return std::nullopt;
    return ScatterBox{*rows, *cols, fill};
}

class BoxBuilder {
public:
    explicit BoxBuilder(Rewriter& rw) : rw_(rw) {}
    /// The ScatterND the next nodes are made for (their provenance).
    void forNode(NodeId id) { origin_ = id; originName_ = rw_.graph().node(id).displayName(); }

    /// Bool mask of the positions of `box` along its Range, shaped [D, 1] for rows and [D] for
    /// columns; kNone when every position is in (no test needed).
    ValueId side(const Box1& box, bool column) {
        auto key = std::make_tuple(box.length, column, box.start, box.end);
        if (auto it = masks_.find(key); it != masks_.end()) return it->second;
        ValueId lower = kNone, upper = kNone;
        // i >= start: for start < 0 that is i - D >= start (Slice clamps start + D at 0; i >= 0).
        if (box.start != 0) lower = compare("GreaterOrEqual", box.start < 0 ? negPositions(box, column) : positions(box, column), box.start);
        // i < end: for end < 0 that is i - D < end (Slice clamps end + D at 0); i < D always.
        if (box.end != kToTheEnd) upper = compare("Less", box.end < 0 ? negPositions(box, column) : positions(box, column), box.end);
        ValueId mask = lower == kNone ? upper : upper == kNone ? lower : both(lower, upper);
        masks_[key] = mask;
        return mask;
    }

    ValueId both(ValueId x, ValueId y) {
        auto key = std::make_pair(x, y);
        if (auto it = ands_.find(key); it != ands_.end()) return it->second;
        ValueId out = rw_.newValue("box_mask", TypeInfo::tensor(DataType::Bool));
        add("And", {x, y}, out);
        return ands_[key] = out;
    }

    ValueId scalar(const TensorPtr& fill) {
        const std::string key = std::to_string(int(fill->dtype)) + std::string((const char*)fill->data.data(), fill->byteSize());
        if (auto it = fills_.find(key); it != fills_.end()) return it->second;
        return fills_[key] = rw_.newInitializer("box_fill", makeTensor(fill->dtype, {}, fill->data.data(), fill->byteSize()));
    }

private:
    /// The first Range of this length met: every box over a Range of the same length reads it.
    const Box1& base(const Box1& box) { return bases_.emplace(box.length, box).first->second; }

    ValueId positions(const Box1& box, bool column) {
        const Box1& b = base(box);
        if (!column) return b.range;
        auto it = columns_.find(b.length);
        if (it != columns_.end()) return it->second;
        ValueId out = rw_.newValue(rw_.graph().value(b.range).name + "_column", TypeInfo::tensor(DataType::Int64));
        add("Unsqueeze", {b.range, rw_.newInitializer("axis_1", int64Tensor({1}, {1}))}, out);
        return columns_[b.length] = out;
    }

    ValueId negPositions(const Box1& box, bool column) {
        const Box1& b = base(box);
        auto key = std::make_pair(b.length, column);
        if (auto it = negs_.find(key); it != negs_.end()) return it->second;
        ValueId out = rw_.newValue(rw_.graph().value(b.range).name + "_from_end", TypeInfo::tensor(DataType::Int64));
        add("Sub", {positions(b, column), b.limit}, out);
        return negs_[key] = out;
    }

    ValueId compare(const char* op, ValueId lhs, int64_t bound) {
        ValueId out = rw_.newValue("box_side", TypeInfo::tensor(DataType::Bool));
        add(op, {lhs, rw_.newInitializer("box_bound", int64Tensor({}, {bound}))}, out);
        return out;
    }

    void add(const char* op, std::vector<ValueId> inputs, ValueId out) {
        rw_.addNode(op, std::move(inputs), {out}, {}, {origin_}, "computes which positions a ScatterND box covers",
                    originName_ + "_" + op);
    }

    Rewriter& rw_;
    NodeId origin_ = kNone;
    std::string originName_;
    std::map<uint64_t, Box1> bases_;
    std::map<std::tuple<uint64_t, bool, int64_t, int64_t>, ValueId> masks_;
    std::map<std::pair<ValueId, ValueId>, ValueId> ands_;
    std::map<std::pair<uint64_t, bool>, ValueId> negs_;
    std::map<uint64_t, ValueId> columns_;
    std::map<std::string, ValueId> fills_;
};

std::string boundText(int64_t start, int64_t end) {
    return (start ? std::to_string(start) : std::string()) + ":" + (end == kToTheEnd ? std::string() : std::to_string(end));
}

}  // namespace

void rewriteScatterBoxFills(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures) {
    const Graph& g = rw.graph();
    // The masks use Unsqueeze with an axes input (13) and GreaterOrEqual (12).
    const bool canBuild = rw.model().opsetFor("") >= 13;
    BoxBuilder builder(rw);
    bool added = false;
    const std::vector<NodeId> order = g.nodeOrder();  // a copy: the loop edits the graph
    for (NodeId id : order) {
        if (!g.hasNode(id)) continue;
        const Node& n = g.node(id);
        if (n.opType != "ScatterND" || !(n.domain.empty() || n.domain == "ai.onnx") || n.inputs.size() != 3 ||
            n.outputs.size() != 1 || n.inputs[0] == kNone || n.inputs[1] == kNone || n.inputs[2] == kNone)
            continue;
        if (const Attribute* red = n.attr("reduction"); red && red->s != "none") continue;
        const ValueId out = n.outputs[0];
        if (out >= a.values.size() || g.value(out).isGraphOutput || (captures && rw.isCapturedBySubgraph(out))) continue;
        const std::string name = n.displayName();
        const ValueId data = n.inputs[0];
        const TensorPtr dataFill = uniformFill(g, data), updFill = uniformFill(g, n.inputs[2]);
        if (dataFill && updFill && sameFill(*dataFill, *updFill)) {
            rw.setRule("scatter-fill-noop");
            const std::string why = name + " writes into '" + g.value(data).name +
                                    "' the value it already holds everywhere";
            rw.bypassNode(id, 0, 0, why);
            rw.applied({}, name + " removed: " + why);
            continue;
        }
        auto box = canBuild ? matchBox(g, a, n) : std::nullopt;
        // The whole tensor (no bound on either side) is not a box worth a Where.
        if (!box || (box->rows.start == 0 && box->rows.end == kToTheEnd && box->cols.start == 0 && box->cols.end == kToTheEnd))
            continue;
        rw.setRule("scatter-box-to-where");
        builder.forNode(id);
        const ValueId rowMask = builder.side(box->rows, true);
        const ValueId colMask = builder.side(box->cols, false);
        const ValueId cond = rowMask == kNone ? colMask : colMask == kNone ? rowMask : builder.both(rowMask, colMask);
        const std::string why = name + " writes one value over the box [" + boundText(box->rows.start, box->rows.end) + ", " +
                                boundText(box->cols.start, box->cols.end) + "] of its data: a Where over Range comparisons";
        const NodeId where = rw.replaceNodes({id}, "Where", {cond, builder.scalar(box->fill), data}, {out}, {}, why, name);
        rw.applied({where}, why);
        added = true;
    }
    if (added) rw.restoreTopologicalOrder();
}

}  // namespace passlens::passes
