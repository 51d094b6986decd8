// min-of-ordered-sizes and cast-round-trip (shape-chain-folding): see SymbolicRewrites.h.
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "passes/SymbolicRewrites.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;
using shape::DimExpr;

namespace {

constexpr int kMaxDepth = 16;
constexpr int64_t kExactLimit = int64_t(1) << 24;  // float32 holds every integer up to 2^24

bool isFloatType(DataType t) { return t == DataType::Float || t == DataType::Double; }
bool isIntType(DataType t) { return t == DataType::Int64 || t == DataType::Int32; }

/// The elements of an integer value when the engine knows every one.
std::optional<std::vector<DimExpr>> integerElements(const Graph& g, const shape::ShapeAnalysis& a, ValueId v) {
    if (v == kNone || v >= a.values.size() || !isIntType(g.value(v).type.elemType)) return std::nullopt;
    const shape::ValueShape& s = a.of(v);
    if (!s.values || s.values->empty()) return std::nullopt;
    std::vector<DimExpr> out;
    for (const shape::Dim& e : *s.values) {
        if (!e) return std::nullopt;
        out.push_back(*e);
    }
    return out;
}

/// A positive finite constant with one element, spelled exactly (its bits) for comparison.
std::optional<std::string> positiveConstant(const Graph& g, ValueId v) {
    auto c = pattern::scalarOf(g, v);
    if (!c || !std::isfinite(*c) || *c <= 0) return std::nullopt;
    uint64_t bits = 0;
    std::memcpy(&bits, &*c, sizeof bits);
    return std::to_string(int(g.value(v).type.elemType)) + ":" + std::to_string(bits);
}

/// `v` as f(root) for an integer `root` >= 0 and f a chain of steps that map [+0, +inf] into
/// itself monotonically (Cast to float, Mul/Div by a positive constant, c / x, Reciprocal,
/// Floor): no step meets a negative number, a NaN or a -0, so f is monotone with rounding
/// included, non-increasing when an odd number of steps invert.
struct MonotoneChain {
    ValueId root = kNone;
    std::vector<std::string> steps;  ///< from v down to the root
    bool decreasing = false;
};

std::optional<MonotoneChain> monotoneChain(const Graph& g, const shape::ShapeAnalysis& a, ValueId v) {
    MonotoneChain c;
    for (int depth = 0; depth < kMaxDepth; ++depth) {
        if (v == kNone || g.value(v).initializer || !isFloatType(g.value(v).type.elemType)) return std::nullopt;
        const NodeId p = g.value(v).producer;
        if (p == kNone) return std::nullopt;
        const Node& n = g.node(p);
        if (pattern::isOp(n, "Cast")) {
            c.steps.push_back("Cast" + std::to_string(n.attrInt("to", 0)));
            const ValueId in = n.inputs[0];
            if (in != kNone && isIntType(g.value(in).type.elemType)) {
                auto e = integerElements(g, a, in);
                if (!e) return std::nullopt;
                for (const DimExpr& x : *e)
                    if (auto lo = x.lowerBound(); !lo || *lo < 0) return std::nullopt;
                c.root = in;
                return c;
            }
            v = in;
        } else if (pattern::isOp(n, "Reciprocal") || pattern::isOp(n, "Floor") || pattern::isOp(n, "Identity")) {
            c.steps.push_back(n.opType);
            c.decreasing ^= n.opType == "Reciprocal";
            v = n.inputs[0];
        } else if (pattern::isOp(n, "Mul") || pattern::isOp(n, "Div")) {
            const bool div = n.opType == "Div";
            if (auto k = positiveConstant(g, n.inputs[1])) {
                c.steps.push_back(n.opType + *k);  // x * k, x / k
                v = n.inputs[0];
            } else if (auto k0 = positiveConstant(g, n.inputs[0])) {
                c.steps.push_back((div ? "RDiv" : "Mul") + *k0);  // k * x, k / x
                c.decreasing ^= div;
                v = n.inputs[1];
            } else {
                return std::nullopt;
            }
        } else {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

/// -1 when a <= b elementwise at every binding, 1 when a >= b, 0 when neither is proven.
int order(const std::vector<DimExpr>& a, const std::vector<DimExpr>& b) {
    if (a.size() != b.size()) return 0;
    bool le = true, ge = true;
    for (size_t i = 0; i < a.size(); ++i) {
        auto up = (b[i] - a[i]).lowerBound(), down = (a[i] - b[i]).lowerBound();
        le = le && up && *up >= 0;
        ge = ge && down && *down >= 0;
    }
    return le ? -1 : ge ? 1 : 0;
}

bool sameDims(const shape::ShapeAnalysis& a, ValueId x, ValueId y) {
    if (x >= a.values.size() || y >= a.values.size()) return false;
    return a.of(x).fullyKnown() && a.of(y).fullyKnown() && *a.of(x).dims == *a.of(y).dims;
}

bool visible(const Rewriter& rw, ValueId v, bool captures) {
    return rw.graph().value(v).isGraphOutput || (captures && rw.isCapturedBySubgraph(v));
}

/// Min/Max of f(a) and f(b), the same monotone chain over integer sizes a <= b: one side.
void pickOrderedSide(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id, bool captures) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const bool isMin = pattern::isOp(n, "Min");
    if ((!isMin && !pattern::isOp(n, "Max")) || n.inputs.size() != 2 || n.outputs.size() != 1) return;
    const ValueId x = n.inputs[0], y = n.inputs[1], out = n.outputs[0];
    if (x == kNone || y == kNone || visible(rw, out, captures) || !sameDims(a, x, out) || !sameDims(a, y, out)) return;
    auto cx = monotoneChain(g, a, x), cy = monotoneChain(g, a, y);
    if (!cx || !cy || cx->steps != cy->steps) return;
    const int o = order(*integerElements(g, a, cx->root), *integerElements(g, a, cy->root));
    if (o == 0) return;
    // f(x) <= f(y) when the roots are ordered the same way as f keeps them.
    const bool xSmaller = (o < 0) != cx->decreasing;
    const ValueId keep = (isMin == xSmaller) ? x : y;
    rw.setRule("min-of-ordered-sizes");
    const std::string why = n.displayName() + ": both sides are one monotone float chain over sizes ordered at every binding; '" +
                            g.value(keep).name + "' is the " + (isMin ? "smaller" : "larger");
    rw.replaceAllUsesWith(out, keep, why);
    rw.eraseNode(id, why);
    rw.applied({}, why);
}

/// Integer elements made by casting a float to an integer, by expression: the Cast and the
/// element's index in it (the first such Cast in topological order).
using CastBirths = std::unordered_map<uint64_t, std::pair<NodeId, size_t>>;

CastBirths castBirths(const Graph& g, const shape::ShapeAnalysis& a) {
    CastBirths out;
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (!pattern::isOp(n, "Cast") || n.inputs[0] == kNone || !isFloatType(g.value(n.inputs[0]).type.elemType)) continue;
        auto e = integerElements(g, a, n.outputs[0]);
        if (!e) continue;
        for (size_t j = 0; j < e->size(); ++j) out.emplace((*e)[j].id(), std::make_pair(id, j));
    }
    return out;
}

/// The value of element `index` of float `v` as a value of its own with `dims`, found back
/// through Concat (axis 0 of vectors) and Unsqueeze/Squeeze/Reshape/Identity.
ValueId elementValue(const Graph& g, const shape::ShapeAnalysis& a, ValueId v, size_t index, const std::vector<shape::Dim>& dims) {
    for (int depth = 0; depth < kMaxDepth; ++depth) {
        if (v == kNone || v >= a.values.size() || !a.of(v).fullyKnown()) return kNone;
        auto count = a.of(v).staticDims();
        int64_t elements = 1;
        if (count)
            for (int64_t d : *count) elements *= d;
        if (count && elements == 1 && index == 0 && *a.of(v).dims == dims) return v;
        const NodeId p = g.value(v).producer;
        if (p == kNone) return kNone;
        const Node& n = g.node(p);
        if (pattern::isOp(n, "Unsqueeze") || pattern::isOp(n, "Squeeze") || pattern::isOp(n, "Reshape") || pattern::isOp(n, "Identity")) {
            v = n.inputs[0];
        } else if (pattern::isOp(n, "Concat") && a.of(v).dims->size() == 1) {
            ValueId next = kNone;
            for (ValueId in : n.inputs) {
                if (in == kNone || in >= a.values.size()) return kNone;
                auto d = a.of(in).staticDims();
                if (!d || d->size() != 1) return kNone;
                if (index < size_t((*d)[0])) {
                    next = in;
                    break;
                }
                index -= size_t((*d)[0]);
            }
            if (next == kNone) return kNone;
            v = next;
        } else {
            return kNone;
        }
    }
    return kNone;
}

/// The value is never -0.0 and never negative: every step keeps [+0, +inf] (see monotoneChain),
/// and additions, Min, Max and Ceil of such values do too.
bool signClear(const Graph& g, const shape::ShapeAnalysis& a, ValueId v, int depth = 0) {
    if (v == kNone || depth > kMaxDepth) return false;
    if (auto c = pattern::floatValues(g, v)) {
        for (double x : *c)
            if (std::signbit(x) || std::isnan(x)) return false;
        return !c->empty();
    }
    const NodeId p = g.value(v).producer;
    if (p == kNone) return false;
    const Node& n = g.node(p);
    if (pattern::isOp(n, "Cast")) {
        const ValueId in = n.inputs[0];
        if (in != kNone && isIntType(g.value(in).type.elemType)) {
            auto e = integerElements(g, a, in);
            if (!e) return false;
            for (const DimExpr& x : *e)
                if (auto lo = x.lowerBound(); !lo || *lo < 0) return false;
            return true;
        }
        return signClear(g, a, in, depth + 1);
    }
    for (const char* op : {"Floor", "Ceil", "Reciprocal", "Identity", "Unsqueeze", "Squeeze", "Reshape"})
        if (pattern::isOp(n, op)) return signClear(g, a, n.inputs[0], depth + 1);
    for (const char* op : {"Mul", "Div", "Add", "Min", "Max", "Concat"})
        if (pattern::isOp(n, op)) {
            for (ValueId in : n.inputs)
                if (!signClear(g, a, in, depth + 1)) return false;
            return !n.inputs.empty();
        }
    return false;
}

/// Whether float `v` flows (through float size arithmetic: values the engine has float facts
/// for) into a Cast back to an integer: a size the engine computes exactly from the integer, and
/// only approximately from the float.
bool becomesASize(const Graph& g, const shape::ShapeAnalysis& a, ValueId v, int depth = 0) {
    if (depth > 8) return true;
    for (NodeId r : g.value(v).consumers) {
        const Node& n = g.node(r);
        if (n.opType == "Cast" && !n.outputs.empty() && n.outputs[0] != kNone && isIntType(g.value(n.outputs[0]).type.elemType)) return true;
        for (ValueId o : n.outputs)
            if (o != kNone && o < a.values.size() && a.of(o).floats && becomesASize(g, a, o, depth + 1)) return true;
    }
    return false;
}

/// Cast to float of an integer that is a whole float32 number cast to an integer, within
/// +-2^24: that number itself.
void skipRoundTrip(Rewriter& rw, const shape::ShapeAnalysis& a, NodeId id, bool captures, const CastBirths& births,
                   const std::unordered_map<NodeId, size_t>& position) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (!pattern::isOp(n, "Cast") || n.outputs.size() != 1) return;
    const ValueId x = n.inputs[0], out = n.outputs[0];
    if (x == kNone || !isIntType(g.value(x).type.elemType) || !isFloatType(g.value(out).type.elemType)) return;
    if (visible(rw, out, captures) || out >= a.values.size() || !a.of(out).fullyKnown() || becomesASize(g, a, out)) return;
    auto e = integerElements(g, a, x);
    if (!e || e->size() != 1) return;
    // x holds the same integer as an element of a Cast from float, at every binding.
    auto source = births.find((*e)[0].id());
    if (source == births.end() || !g.hasNode(source->second.first)) return;
    const Node& toInt = g.node(source->second.first);
    auto lo = (*e)[0].lowerBound(), hi = (*e)[0].upperBound();
    if (!lo || !hi || *lo < -kExactLimit || *hi > kExactLimit) return;
    const ValueId y = elementValue(g, a, toInt.inputs[0], source->second.second, *a.of(out).dims);
    if (y == kNone || g.value(y).type.elemType != g.value(out).type.elemType) return;
    // y is a whole number (the output of a rounding) and never -0.0: the cast back is y exactly.
    const NodeId yp = g.value(y).producer;
    if (yp == kNone || !position.count(yp) || position.at(yp) >= position.at(id)) return;
    const Node& rounding = g.node(yp);
    if (!pattern::isOp(rounding, "Floor") && !pattern::isOp(rounding, "Ceil") && !pattern::isOp(rounding, "Round")) return;
    if (!signClear(g, a, y)) return;
    rw.setRule("cast-round-trip");
    const std::string why = n.displayName() + " casts back to float '" + g.value(y).name + "', a whole number within 2^24 (" +
                            (*e)[0].toString() + ")";
    rw.replaceAllUsesWith(out, y, why);
    rw.eraseNode(id, why);
    rw.applied({}, why);
}

}  // namespace

void rewriteFloatSizes(Rewriter& rw, const shape::ShapeAnalysis& a, bool captures) {
    const std::vector<NodeId> order = rw.graph().nodeOrder();
    std::unordered_map<NodeId, size_t> position;
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    const CastBirths births = castBirths(rw.graph(), a);
    for (NodeId id : order) {
        if (!rw.graph().hasNode(id)) continue;
        pickOrderedSide(rw, a, id, captures);
        if (rw.graph().hasNode(id)) skipRoundTrip(rw, a, id, captures, births, position);
    }
}

}  // namespace passlens::passes
