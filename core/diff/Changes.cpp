#include "diff/Changes.h"

#include "diff/SchemaDefaults.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eval/TensorOps.h"

namespace passlens::diff {

using namespace passlens::ir;

namespace {

std::string qualifiedOp(const Node& n) { return n.domain.empty() ? n.opType : n.domain + "." + n.opType; }

std::string tensorTypeText(const Tensor& t) {
    std::string s = std::string(dataTypeName(t.dtype)) + "[";
    for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? "x" : "") + std::to_string(t.dims[i]);
    return s + "]";
}

bool isGraphKind(AttrKind k) { return k == AttrKind::Graph || k == AttrKind::Graphs; }

/// "<differ>: max |Δ| 0.013", "<differ>" (same type, not numeric) or "float32[64] → float32[32]".
std::string tensorDifference(const Tensor& x, const Tensor& y, const std::string& differ) {
    const std::string delta = maxAbsDifference(x, y);
    if (!delta.empty()) return differ + ": " + delta;
    if (x.dtype == y.dtype && x.dims == y.dims) return differ;
    return tensorTypeText(x) + " → " + tensorTypeText(y);
}

void describeAttributes(const Node& na, const Node& nb, std::vector<std::string>& out) {
    // Written out or left out at its default (by either side's op, e.g. Conv → FusedConv): no change.
    auto isDefault = [&](const Attribute& a) {
        return isSchemaDefault(na.domain, na.opType, a) || isSchemaDefault(nb.domain, nb.opType, a);
    };
    for (const Attribute& x : na.attributes) {
        if (isGraphKind(x.kind)) continue;
        const Attribute* y = nb.attr(x.name);
        if (!y) {
            if (isDefault(x)) continue;
            out.push_back("attribute " + x.name + " removed (was " + x.valueToString() + ")");
            continue;
        }
        if (hashAttributes({x}) == hashAttributes({*y})) continue;
        if (x.kind == AttrKind::Tensor && y->kind == AttrKind::Tensor && x.t && y->t)
            out.push_back("attribute " + x.name + " " + tensorDifference(*x.t, *y->t, "differs"));
        else
            out.push_back("attribute " + x.name + " " + x.valueToString() + " → " + y->valueToString());
    }
    for (const Attribute& y : nb.attributes)
        if (!isGraphKind(y.kind) && !na.attr(y.name) && !isDefault(y)) out.push_back("attribute " + y.name + " added (" + y.valueToString() + ")");
}

}  // namespace

std::string maxAbsDifference(const Tensor& x, const Tensor& y) {
    if (x.dtype != y.dtype || x.dims != y.dims || x.dtype == DataType::String || elementSize(x.dtype) == 0 ||
        x.byteSize() != y.byteSize())
        return {};
    const std::vector<double> dx = eval::toDoubles(x), dy = eval::toDoubles(y);
    if (dx.size() != dy.size()) return {};
    double worst = 0;
    for (size_t i = 0; i < dx.size(); ++i) worst = std::max(worst, std::fabs(dx[i] - dy[i]));
    char buf[48];
    std::snprintf(buf, sizeof buf, "max |Δ| %.3g", worst);
    return buf;
}

std::vector<std::string> describeChanges(const GraphFacts& a, NodeId na, const GraphFacts& b, NodeId nb) {
    std::vector<std::string> out;
    const Node& x = a.graph.node(na);
    const Node& y = b.graph.node(nb);
    if (x.opType != y.opType || x.domain != y.domain) out.push_back("op " + qualifiedOp(x) + " → " + qualifiedOp(y));
    if (a.attrHash[na] != b.attrHash[nb]) describeAttributes(x, y, out);
    if (x.inputs.size() != y.inputs.size())
        out.push_back("inputs " + std::to_string(x.inputs.size()) + " → " + std::to_string(y.inputs.size()));
    for (size_t s = 0; s < std::min(x.inputs.size(), y.inputs.size()); ++s) {
        const ValueId vx = x.inputs[s], vy = y.inputs[s];
        if (vx == kNone || vy == kNone) continue;
        const bool cx = a.constHash[vx].has_value(), cy = b.constHash[vy].has_value();
        // Constant nodes on both sides are rows of their own: a new value is their change, not ours.
        const bool fromConstantNodes = a.graph.value(vx).producer != kNone && b.graph.value(vy).producer != kNone;
        if (cx && cy && fromConstantNodes) continue;
        if (cx && cy && *a.constHash[vx] != *b.constHash[vy]) {
            const Tensor* tx = a.constTensor(vx);
            const Tensor* ty = b.constTensor(vy);
            out.push_back("input " + std::to_string(s) + " " + (tx && ty ? tensorDifference(*tx, *ty, "values differ") : std::string("values differ")));
        } else if (cx != cy) {
            out.push_back("input " + std::to_string(s) + (cx ? " is a constant in A only" : " is a constant in B only"));
        }
    }
    return out;
}

}  // namespace passlens::diff
