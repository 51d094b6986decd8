// Shared preconditions and rewrites of the algebraic rules.
#include <algorithm>
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

bool sameStaticType(const Value& a, const Value& b) {
    if (!a.type.isTensor() || !b.type.isTensor() || a.type.elemType != b.type.elemType) return false;
    if (!a.type.shape || !b.type.shape || a.type.shape->dims.size() != b.type.shape->dims.size()) return false;
    for (size_t i = 0; i < a.type.shape->dims.size(); ++i) {
        const Dim& x = a.type.shape->dims[i];
        const Dim& y = b.type.shape->dims[i];
        // A dim_param names one value wherever it appears (the shape engine writes canonical
        // expressions), so equal names prove equal dims as much as equal numbers do.
        if (x.isStatic() && y.isStatic() && *x.value == *y.value) continue;
        if (!x.isStatic() && !y.isStatic() && !x.param.empty() && x.param == y.param) continue;
        return false;
    }
    return true;
}

bool constantAll(const Value& v, double k) {
    if (!v.initializer || v.isGraphInput) return false;  // an overridable initializer is not a constant
    const Tensor& t = *v.initializer;
    int64_t n = t.elementCount();
    if (n <= 0 || (int64_t)t.byteSize() < n * (int64_t)elementSize(t.dtype)) return false;
    for (int64_t i = 0; i < n; ++i) {
        double x;
        switch (t.dtype) {
        case DataType::Float: x = t.as<float>()[i]; break;
        case DataType::Double: x = t.as<double>()[i]; break;
        case DataType::Int64: x = (double)t.as<int64_t>()[i]; break;
        case DataType::Int32: x = (double)t.as<int32_t>()[i]; break;
        default: return false;
        }
        if (x != k) return false;
    }
    return true;
}

std::optional<int64_t> oneIndexConstant(const Graph& g, ValueId v, size_t rank) {
    TensorPtr t = v == kNone ? nullptr : match::constantOf(g, v);
    if (!t || t->dims.size() != rank || t->elementCount() != 1 || t->byteSize() < elementSize(t->dtype)) return std::nullopt;
    if (t->dtype == DataType::Int64) return t->as<int64_t>()[0];
    if (t->dtype == DataType::Int32) return t->as<int32_t>()[0];
    return std::nullopt;
}

std::optional<std::vector<int64_t>> constantInts(const Graph& g, ValueId v) {
    if (v == kNone || !g.value(v).initializer || g.value(v).isGraphInput) return std::nullopt;
    const Tensor& t = *g.value(v).initializer;
    const int64_t n = t.elementCount();
    if (n < 0 || (int64_t)t.byteSize() < n * (int64_t)elementSize(t.dtype)) return std::nullopt;
    std::vector<int64_t> out(static_cast<size_t>(n));
    for (size_t i = 0; i < out.size(); ++i) {
        if (t.dtype == DataType::Int64) out[i] = t.as<int64_t>()[i];
        else if (t.dtype == DataType::Int32) out[i] = t.as<int32_t>()[i];
        else return std::nullopt;
    }
    return out;
}

std::optional<std::vector<int64_t>> normalizedAxes(const std::vector<int64_t>& axes, int64_t rank) {
    std::vector<int64_t> out;
    std::set<int64_t> seen;
    for (int64_t a : axes) {
        if (a < 0) {
            if (rank < 0) return std::nullopt;
            a += rank;
        }
        if (a < 0 || (rank >= 0 && a >= rank) || !seen.insert(a).second) return std::nullopt;
        out.push_back(a);
    }
    return out;
}

std::optional<std::set<int64_t>> normalizedAxisSet(const std::vector<int64_t>& axes, int64_t rank) {
    auto v = normalizedAxes(axes, rank);
    if (!v) return std::nullopt;
    return std::set<int64_t>(v->begin(), v->end());
}

std::optional<std::vector<int64_t>> intsFromAttrOrInput(const Graph& g, const Node& n, const char* attr, size_t slot,
                                                        bool* present) {
    if (const Attribute* a = n.attr(attr)) {
        if (present) *present = true;
        return a->ints;
    }
    const bool hasInput = slot < n.inputs.size() && n.inputs[slot] != kNone;
    if (present) *present = hasInput;
    return hasInput ? constantInts(g, n.inputs[slot]) : std::nullopt;
}

std::optional<std::vector<int64_t>> broadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    const size_t r = std::max(a.size(), b.size());
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) {
        const int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
        const int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (x != y && x != 1 && y != 1) return std::nullopt;
        out[i] = x == 1 ? y : x;
    }
    return out;
}

bool isIntegerType(DataType t) {
    switch (t) {
    case DataType::Int8: case DataType::Int16: case DataType::Int32: case DataType::Int64:
    case DataType::UInt8: case DataType::UInt16: case DataType::UInt32: case DataType::UInt64: return true;
    default: return false;
    }
}

void bypass(Rewriter& rw, NodeId id, size_t in, const std::string& rule, const std::string& why) {
    rw.setRule(rule);
    if (rw.isCapturedBySubgraph(rw.graph().node(id).outputs[0])) {
        rw.missed({id}, "not removed: its output is read by a subgraph (outer-scope capture)");
        return;
    }
    std::string name = rw.graph().node(id).displayName();
    size_t before = rw.graph().nodeCount();
    rw.bypassNode(id, in, 0, why);
    if (rw.graph().nodeCount() < before) rw.applied({}, name + ": " + why);
}

void cancelPair(Rewriter& rw, NodeId outer, NodeId inner, ValueId x, const std::string& rule, const std::string& why) {
    const Graph& g = rw.graph();
    rw.setRule(rule);
    const ValueId out = g.node(outer).outputs[0];
    const ValueId mid = g.node(outer).inputs[0];
    const std::string outerName = g.node(outer).displayName(), innerName = g.node(inner).displayName();
    if (rw.isCapturedBySubgraph(out)) {
        rw.missed({outer, inner}, "not cancelled: " + outerName + "'s result is read by a subgraph (outer-scope capture)", {out});
        return;
    }
    const Value& xv = g.value(x);
    if (g.value(out).isGraphOutput && (xv.producer == kNone || xv.isGraphOutput)) {
        rw.missed({outer, inner}, "not cancelled: " + outerName + "'s result is a graph output and x is graph-visible too", {out});
        return;
    }
    // The outer node reads x directly, the inner one goes when nothing else reads it, then the
    // outer one (now an identity on x) is bypassed, keeping a graph output's name.
    rw.setInput(outer, 0, x, outerName + " reads " + innerName + "'s input directly");
    if (g.value(mid).consumers.empty() && !g.value(mid).isGraphOutput && !rw.isCapturedBySubgraph(mid))
        rw.eraseNode(inner, why);
    rw.bypassNode(outer, 0, 0, why);
    rw.applied({}, outerName + ": " + why);
}

bool isElementwiseOp(const Node& n) {
    static const std::set<std::string> kUnary{"Relu", "Neg", "Abs", "Exp", "Log", "Sigmoid", "Tanh", "Sqrt", "Floor",
                                              "Ceil", "Reciprocal", "Erf", "Sign", "Round", "Not", "Cast"};
    static const std::set<std::string> kBinary{"Add", "Sub", "Mul", "Div", "Max", "Min", "And", "Or", "Xor",
                                               "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    if (!(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.size() != 1 || n.outputs[0] == kNone) return false;
    for (ValueId v : n.inputs)
        if (v == kNone) return false;
    return (kUnary.count(n.opType) && n.inputs.size() == 1) || (kBinary.count(n.opType) && n.inputs.size() == 2) ||
           (n.opType == "Where" && n.inputs.size() == 3);
}

namespace {

/// True when some output of `n` reaches a graph output or a subgraph through its readers;
/// conservative (live) past `depth` readers. `dead` memoizes nodes found dead.
bool reachesAnOutput(const Rewriter& rw, NodeId n, int depth, std::set<NodeId>& dead) {
    if (dead.count(n)) return false;
    if (depth > 24) return true;
    const Graph& g = rw.graph();
    for (ValueId o : g.node(n).outputs) {
        if (o == kNone) continue;
        if (g.value(o).isGraphOutput || rw.isCapturedBySubgraph(o)) return true;
        for (NodeId c : g.value(o).consumers)
            if (reachesAnOutput(rw, c, depth + 1, dead)) return true;
    }
    dead.insert(n);
    return false;
}

}  // namespace

bool readOutsideByLiveNodes(const Rewriter& rw, ValueId v, const std::set<NodeId>& inside) {
    const Graph& g = rw.graph();
    if (g.value(v).isGraphOutput || rw.isCapturedBySubgraph(v)) return true;
    std::set<NodeId> dead;
    for (NodeId c : g.value(v).consumers)
        if (!inside.count(c) && reachesAnOutput(rw, c, 0, dead)) return true;
    return false;
}

void eraseDeadChain(Rewriter& rw, ValueId v, const std::string& why) {
    std::vector<ValueId> work{v};
    for (int budget = 32; !work.empty() && budget > 0; --budget) {
        const ValueId cur = work.back();
        work.pop_back();
        const Graph& g = rw.graph();
        if (cur == kNone || !g.value(cur).consumers.empty() || g.value(cur).isGraphOutput || rw.isCapturedBySubgraph(cur))
            continue;
        const NodeId p = g.value(cur).producer;
        if (p == kNone || !g.hasNode(p) || g.node(p).hasSubgraphs()) continue;
        const Node& n = g.node(p);
        bool unread = true;
        for (ValueId o : n.outputs)
            if (o != kNone && (!g.value(o).consumers.empty() || g.value(o).isGraphOutput || rw.isCapturedBySubgraph(o)))
                unread = false;
        if (!unread) continue;
        const std::vector<ValueId> inputs = n.inputs;
        rw.eraseNode(p, why);
        for (ValueId in : inputs) work.push_back(in);
    }
}

}  // namespace passlens::passes::algebraic
