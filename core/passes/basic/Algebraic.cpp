// Algebraic simplification: a catalog of named identities, each with a precondition that keeps
// the output's shape and type unchanged (no rewrite may change broadcasting).
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include "passes/basic/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

const Tensor* constantOf(const Graph& g, ValueId v) {
    if (v == kNone) return nullptr;
    const Value& val = g.value(v);
    return val.initializer && !val.isGraphInput ? val.initializer.get() : nullptr;
}

/// Every element of a float32/float64/int constant equals `x`.
bool allEqual(const Tensor& t, double x) {
    int64_t n = t.elementCount();
    for (int64_t i = 0; i < n; ++i) {
        double v;
        switch (t.dtype) {
        case DataType::Float: v = t.as<float>()[i]; break;
        case DataType::Double: v = t.as<double>()[i]; break;
        case DataType::Int64: v = static_cast<double>(t.as<int64_t>()[i]); break;
        case DataType::Int32: v = t.as<int32_t>()[i]; break;
        default: return false;
        }
        if (v != x) return false;
    }
    return n > 0;
}

bool sameType(const TypeInfo& a, const TypeInfo& b) {
    return a.isTensor() && b.isTensor() && a.elemType == b.elemType && a.shape && b.shape && *a.shape == *b.shape &&
           a.shape->isStatic();
}

struct Ctx {
    Rewriter& rw;
    Graph& g;
    NodeId n;
    const Node& node() const { return g.node(n); }
    const TypeInfo& typeOf(ValueId v) const { return g.value(v).type; }
};

/// x op c → x, when c is the identity element and x already has the output's shape and type.
bool identityOperand(Ctx& c, double neutral, bool commutes, const std::string& what) {
    const Node& node = c.node();
    if (node.inputs.size() != 2) return false;
    for (size_t k = 0; k < 2; ++k) {
        if (k == 0 && !commutes) continue;
        size_t constSlot = k == 0 ? 0 : 1, dataSlot = 1 - constSlot;
        const Tensor* t = constantOf(c.g, node.inputs[constSlot]);
        if (!t || !allEqual(*t, neutral)) continue;
        ValueId x = node.inputs[dataSlot];
        if (!sameType(c.typeOf(x), c.typeOf(node.outputs[0]))) {
            c.rw.missed({c.n}, "not simplified: " + what + " would change the output's shape or type (" +
                                  c.typeOf(x).toString() + " vs " + c.typeOf(node.outputs[0]).toString() + ")",
                        {x});
            return false;
        }
        c.rw.bypassNode(c.n, dataSlot, 0, node.displayName() + ": " + what);
        return true;
    }
    return false;
}

bool passThrough(Ctx& c, const std::string& why) {
    if (!sameType(c.typeOf(c.node().inputs[0]), c.typeOf(c.node().outputs[0]))) return false;
    c.rw.bypassNode(c.n, 0, 0, c.node().displayName() + " " + why);
    return true;
}

/// f(f(x)) → x (involutions) or f(x) (idempotent ops): only when the inner result has one reader.
bool nested(Ctx& c, bool involution) {
    const Node& node = c.node();
    ValueId in = node.inputs[0];
    NodeId inner = c.g.value(in).producer;
    if (inner == kNone || c.g.node(inner).opType != node.opType) return false;
    if (c.g.value(in).consumers.size() != 1 || c.g.value(in).isGraphOutput) {
        c.rw.missed({c.n, inner}, "not simplified: " + c.g.node(inner).displayName() + "'s result has other readers", {in});
        return false;
    }
    std::string name = node.displayName();
    if (involution) {
        ValueId x = c.g.node(inner).inputs[0];
        c.rw.replaceAllUsesWith(in, x, name + " cancels " + c.g.node(inner).displayName());  // outer now reads x
        c.rw.eraseNode(inner, "cancelled by " + name);
        c.rw.bypassNode(c.n, 0, 0, name + " ∘ " + node.opType + " is the identity");
    } else {
        c.rw.bypassNode(c.n, 0, 0, name + " repeats " + c.g.node(inner).displayName());
    }
    return true;
}

bool transposeRules(Ctx& c) {
    const Node& node = c.node();
    std::vector<int64_t> perm = node.attrInts("perm");
    bool identity = !perm.empty();
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
    if (identity) {
        c.rw.setRule("identity-transpose");
        return passThrough(c, "has the identity permutation");
    }
    ValueId in = node.inputs[0];
    NodeId inner = c.g.value(in).producer;
    if (perm.empty() || inner == kNone || c.g.node(inner).opType != "Transpose") return false;
    std::vector<int64_t> p1 = c.g.node(inner).attrInts("perm");
    if (p1.size() != perm.size()) return false;
    c.rw.setRule("compose-transposes");
    std::vector<int64_t> composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) composed[i] = p1[static_cast<size_t>(perm[i])];
    std::string name = node.displayName(), innerName = c.g.node(inner).displayName();
    c.rw.setInput(c.n, 0, c.g.node(inner).inputs[0], name + " composed with " + innerName);
    c.rw.setAttribute(c.n, Attribute::makeInts("perm", composed), "perm of " + innerName + " then " + name);
    if (c.g.value(in).consumers.empty() && !c.g.value(in).isGraphOutput) c.rw.eraseNode(inner, "composed into " + name);
    return true;
}

bool divByConstant(Ctx& c) {
    const Node& node = c.node();
    const Tensor* t = constantOf(c.g, node.inputs[1]);
    if (!t || t->dtype != DataType::Float) return false;
    int64_t n = t->elementCount();
    std::vector<float> inv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        float d = t->as<float>()[i];
        if (d == 0.f || !std::isfinite(1.f / d)) {
            c.rw.missed({c.n}, "not rewritten: divisor has a zero or subnormal element");
            return false;
        }
        inv[static_cast<size_t>(i)] = 1.f / d;
    }
    if (allEqual(*t, 1.0)) return false;  // div-one handles it
    std::string name = node.displayName();
    ValueId recip = c.rw.newInitializer(c.g.value(node.inputs[1]).name + "_reciprocal", makeTensorOf(DataType::Float, t->dims, inv));
    ValueId x = node.inputs[0];
    ValueId out = node.outputs[0];
    c.rw.replaceNodes({c.n}, "Mul", {x, recip}, {out}, {}, name + ": division by a constant is multiplication by its reciprocal", name + "_mul");
    return true;
}

using Rule = std::function<bool(Ctx&)>;

const std::multimap<std::string, std::pair<std::string, Rule>>& catalog() {
    static const std::multimap<std::string, std::pair<std::string, Rule>> rules = {
        {"Identity", {"identity", [](Ctx& c) { c.rw.bypassNode(c.n, 0, 0, c.node().displayName() + " copies its input"); return true; }}},
        {"Dropout", {"dropout-inference", [](Ctx& c) {
             const Node& n = c.node();
             bool maskUsed = n.outputs.size() > 1 && n.outputs[1] != kNone && (!c.g.value(n.outputs[1]).consumers.empty() || c.g.value(n.outputs[1]).isGraphOutput);
             bool training = n.inputs.size() > 2 && n.inputs[2] != kNone;
             if (maskUsed || training) { c.rw.missed({c.n}, "not removed: Dropout's mask is read or training_mode is set"); return false; }
             c.rw.bypassNode(c.n, 0, 0, n.displayName() + " is the identity at inference");
             return true; }}},
        {"Add", {"add-zero", [](Ctx& c) { return identityOperand(c, 0.0, true, "x + 0 = x"); }}},
        {"Sub", {"sub-zero", [](Ctx& c) { return identityOperand(c, 0.0, false, "x - 0 = x"); }}},
        {"Mul", {"mul-one", [](Ctx& c) { return identityOperand(c, 1.0, true, "x * 1 = x"); }}},
        {"Div", {"div-one", [](Ctx& c) { return identityOperand(c, 1.0, false, "x / 1 = x"); }}},
        {"Div", {"div-to-mul", divByConstant}},
        {"Pow", {"pow-one", [](Ctx& c) { return identityOperand(c, 1.0, false, "x ^ 1 = x"); }}},
        {"Neg", {"neg-neg", [](Ctx& c) { return nested(c, true); }}},
        {"Relu", {"relu-relu", [](Ctx& c) { return nested(c, false); }}},
        {"Cast", {"noop-cast", [](Ctx& c) {
             const TypeInfo& t = c.typeOf(c.node().inputs[0]);
             if (!t.isTensor() || static_cast<int64_t>(t.elemType) != c.node().attrInt("to", -1)) return false;
             return passThrough(c, "casts to the type it already has"); }}},
        {"Reshape", {"noop-reshape", [](Ctx& c) { return passThrough(c, "reshapes to the same static shape"); }}},
        {"Expand", {"noop-expand", [](Ctx& c) { return passThrough(c, "expands to the shape it already has"); }}},
        {"Concat", {"concat-of-one", [](Ctx& c) { return c.node().inputs.size() == 1 && passThrough(c, "concatenates one input"); }}},
        {"Transpose", {"transpose", transposeRules}},
    };
    return rules;
}

}  // namespace

void AlgebraicSimplification::runImpl(PassContext& ctx) const {
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        auto order = g.topologicalOrder();
        if (!order) return;
        for (NodeId n : *order) {
            if (!g.hasNode(n)) continue;
            const Node& node = g.node(n);
            if (!canonicalDomain(node.domain).empty() || node.inputs.empty() || node.inputs[0] == kNone || node.outputs.empty() ||
                node.outputs[0] == kNone)
                continue;
            auto [begin, end] = catalog().equal_range(node.opType);
            for (auto it = begin; it != end; ++it) {
                if (!g.hasNode(n)) break;
                rw.setRule(it->second.first);
                std::string name = g.node(n).displayName();
                Ctx c{rw, g, n};
                if (it->second.second(c)) {
                    rw.applied({}, name + ": " + it->second.first);
                    break;
                }
            }
        }
    });
}

}  // namespace passlens::passes
