// Reading shape chains back (see ShapeChain.h). Each step is a pure index operation on a short
// int64 vector, so the trace is exact: entry i of the result is entry i of the run-time value.
#include "passes/ShapeChain.h"

#include <algorithm>

#include "ir/Tensor.h"
#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {


ShapeTrace fail(NodeId blocker, std::string why) {
    ShapeTrace t;
    t.blocker = blocker;
    t.why = std::move(why);
    return t;
}

/// Normalizes a possibly negative index into [0, size); nullopt when out of range.
std::optional<size_t> normalize(int64_t i, size_t size) {
    if (i < 0) i += (int64_t)size;
    if (i < 0 || i >= (int64_t)size) return std::nullopt;
    return (size_t)i;
}

ShapeTrace traceConstant(const Value& val, const Tensor& c) {
    ShapeTrace t;
    if ((c.dtype != DataType::Int64 && c.dtype != DataType::Int32) || c.dims.size() > 1)
        return fail(kNone, "'" + val.name + "' is a constant but not an int64 scalar or vector");
    const int64_t n = c.elementCount();
    if ((int64_t)c.byteSize() < n * (int64_t)elementSize(c.dtype)) return fail(kNone, "'" + val.name + "' has a short payload");
    for (int64_t i = 0; i < n; ++i)
        t.entries.push_back({c.dtype == DataType::Int64 ? c.as<int64_t>()[i] : (int64_t)c.as<int32_t>()[i], kNone, 0});
    t.scalar = c.dims.empty();
    return t;
}

void append(ShapeTrace& into, const ShapeTrace& part) {
    into.entries.insert(into.entries.end(), part.entries.begin(), part.entries.end());
    into.nodes.insert(into.nodes.end(), part.nodes.begin(), part.nodes.end());
}

ShapeTrace trace(const Graph& g, ValueId v, int depth);

ShapeTrace traceNode(const Graph& g, NodeId id, int depth) {
    const Node& n = g.node(id);
    const std::string& op = n.opType;
    auto input = [&](size_t i) { return i < n.inputs.size() ? n.inputs[i] : kNone; };
    ShapeTrace out;
    if (op == "Shape") {
        const ValueId x = input(0);
        auto rank = x == kNone || !g.value(x).type.shape ? std::nullopt : std::optional<size_t>(g.value(x).type.shape->rank());
        if (!rank && x != kNone && !n.attr("start") && !n.attr("end")) {
            out.wholeShapeOf = x;
            out.nodes.push_back(id);
            return out;
        }
        if (!rank) return fail(id, n.displayName() + " reads '" + (x == kNone ? "?" : g.value(x).name) + "', whose rank is unknown");
        int64_t r = (int64_t)*rank, start = n.attrInt("start", 0), end = n.attrInt("end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<int64_t>(start, 0, r);
        end = std::clamp<int64_t>(end, start, r);
        for (int64_t k = start; k < end; ++k) out.entries.push_back({std::nullopt, x, (size_t)k});
    } else if (op == "Cast" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
        // int32 holds every dim below 2^31, so exporters' int64 → int32 → int64 round trips keep the values.
        const int64_t to = n.attrInt("to", 0);
        if (op == "Cast" && to != (int64_t)DataType::Int64 && to != (int64_t)DataType::Int32)
            return fail(id, n.displayName() + " casts to a type other than int64 or int32");
        out = trace(g, input(0), depth + 1);
        if (!out.ok()) return out;
        if (out.wholeShapeOf != kNone && op != "Cast" && op != "Identity")
            return fail(id, n.displayName() + " reads the whole shape of '" + g.value(out.wholeShapeOf).name + "', whose rank is unknown");
        if (op == "Unsqueeze") {
            if (!out.scalar) return fail(id, n.displayName() + " unsqueezes a vector, not a scalar");
            auto axes = algebraic::intsFromAttrOrInput(g, n, "axes", 1);
            if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))
                return fail(id, n.displayName() + " does not unsqueeze a scalar on axis 0");
            out.scalar = false;
        } else if (op == "Squeeze") {
            if (out.scalar || out.entries.size() != 1) return fail(id, n.displayName() + " does not squeeze a 1-element vector");
            out.scalar = true;
        }
    } else if (op == "Concat") {
        if (n.attrInt("axis", 0) != 0 && n.attrInt("axis", 0) != -1) return fail(id, n.displayName() + " concatenates on an axis other than 0");
        for (ValueId in : n.inputs) {
            ShapeTrace part = trace(g, in, depth + 1);
            if (!part.ok()) return part;
            if (part.scalar) return fail(id, n.displayName() + " reads a scalar");
            if (part.wholeShapeOf != kNone)
                return fail(id, n.displayName() + " reads the whole shape of '" + g.value(part.wholeShapeOf).name + "', whose rank is unknown");
            append(out, part);
        }
    } else if (op == "Gather") {
        if (n.attrInt("axis", 0) != 0) return fail(id, n.displayName() + " gathers on an axis other than 0");
        ShapeTrace data = trace(g, input(0), depth + 1);
        if (!data.ok()) return data;
        const ValueId idx = input(1);
        auto ints = algebraic::constantInts(g, idx);
        if (!ints || g.value(idx).initializer->dims.size() > 1) return fail(id, n.displayName() + "'s index is not a constant scalar or vector");
        for (int64_t i : *ints) {
            if (data.wholeShapeOf != kNone) {  // rank unknown: only a non-negative index names a dim
                if (i < 0) return fail(id, n.displayName() + " indexes a shape of unknown rank from the end");
                out.entries.push_back({std::nullopt, data.wholeShapeOf, (size_t)i});
                continue;
            }
            auto k = normalize(i, data.entries.size());
            if (!k) return fail(id, n.displayName() + "'s index " + std::to_string(i) + " is out of range");
            out.entries.push_back(data.entries[*k]);
        }
        out.scalar = g.value(idx).initializer->dims.empty();
        out.nodes = data.nodes;
    } else if (op == "Slice") {
        ShapeTrace data = trace(g, input(0), depth + 1);
        if (!data.ok()) return data;
        if (data.wholeShapeOf != kNone)
            return fail(id, n.displayName() + " slices the shape of '" + g.value(data.wholeShapeOf).name + "', whose rank is unknown");
        auto starts = algebraic::intsFromAttrOrInput(g, n, "starts", 1), ends = algebraic::intsFromAttrOrInput(g, n, "ends", 2);
        bool hasAxes = false;
        auto axes = algebraic::intsFromAttrOrInput(g, n, "axes", 3, &hasAxes);
        auto steps = input(4) != kNone ? algebraic::constantInts(g, input(4)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
        if (!starts || !ends || starts->size() != 1 || ends->size() != 1 || (hasAxes && (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) ||
            !steps || steps->size() != 1 || (*steps)[0] != 1)
            return fail(id, n.displayName() + " is not a constant, unit-step slice of a vector");
        const int64_t size = (int64_t)data.entries.size();
        int64_t s = (*starts)[0], e = (*ends)[0];
        if (s < 0) s += size;
        if (e < 0) e += size;
        s = std::clamp<int64_t>(s, 0, size);
        e = std::clamp<int64_t>(e, s, size);
        out.entries.assign(data.entries.begin() + s, data.entries.begin() + e);
        out.nodes = data.nodes;
    } else {
        return fail(id, n.displayName() + " (" + op + ") is not part of a shape chain");
    }
    out.nodes.push_back(id);
    return out;
}

ShapeTrace trace(const Graph& g, ValueId v, int depth) {
    if (v == kNone) return fail(kNone, "an input is missing");
    if (depth > 64) return fail(kNone, "the chain is deeper than 64 nodes");
    const Value& val = g.value(v);
    if (val.initializer && !val.isGraphInput) return traceConstant(val, *val.initializer);
    if (val.producer == kNone) return fail(kNone, "'" + val.name + "' is a graph input");
    const Node& p = g.node(val.producer);
    if (!match::inDefaultDomain(p)) return fail(val.producer, p.displayName() + " is not a standard op");
    // A Constant node (shape-chain-folding runs before constant folding turns them into initializers).
    if (p.opType == "Constant") {
        TensorPtr c;
        if (const Attribute* a = p.attr("value"); a && a->t) c = a->t;
        else if (const Attribute* a = p.attr("value_int")) c = int64Tensor({}, {a->i});
        else if (const Attribute* a = p.attr("value_ints")) c = int64Tensor({(int64_t)a->ints.size()}, a->ints);
        if (!c) return fail(val.producer, p.displayName() + " is a Constant in a form not read here");
        ShapeTrace t = traceConstant(val, *c);
        if (t.ok()) t.nodes.push_back(val.producer);
        return t;
    }
    return traceNode(g, val.producer, depth);
}

}  // namespace

ShapeTrace traceShapeVector(const Graph& g, ValueId v) {
    ShapeTrace t = trace(g, v, 0);
    std::sort(t.nodes.begin(), t.nodes.end());
    t.nodes.erase(std::unique(t.nodes.begin(), t.nodes.end()), t.nodes.end());
    return t;
}

std::optional<Dim> dimOf(const Graph& g, ValueId v, size_t k) {
    if (v == kNone) return std::nullopt;
    const TypeInfo& t = g.value(v).type;
    if (!t.isTensor() || !t.shape || k >= t.shape->rank()) return std::nullopt;
    return t.shape->dims[k];
}

bool provablyEqualDims(const Graph& g, ValueId va, size_t a, ValueId vb, size_t b) {
    if (va == vb && a == b) return true;
    auto da = dimOf(g, va, a), db = dimOf(g, vb, b);
    if (!da || !db) return false;
    if (da->isStatic() && db->isStatic()) return *da->value == *db->value;
    return !da->isStatic() && !db->isStatic() && !da->param.empty() && da->param == db->param;
}

std::optional<int64_t> staticValueOf(const Graph& g, const ShapeEntry& e) {
    if (e.literal) return e.literal;
    auto d = dimOf(g, e.source, e.dim);
    if (d && d->isStatic()) return d->value;
    return std::nullopt;
}

bool hasSubgraphNodes(const Graph& g) {
    return std::any_of(g.nodeOrder().begin(), g.nodeOrder().end(), [&](NodeId n) { return g.node(n).hasSubgraphs(); });
}

std::string describeEntry(const Graph& g, const ShapeEntry& e) {
    if (e.literal) return std::to_string(*e.literal);
    auto d = dimOf(g, e.source, e.dim);
    std::string label = !d ? "?" : d->isStatic() ? std::to_string(*d->value) : d->param.empty() ? "?" : d->param;
    return "dim " + std::to_string(e.dim) + " (" + label + ") of '" + g.value(e.source).name + "'";
}

}  // namespace passlens::passes
