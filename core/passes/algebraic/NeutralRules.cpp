// Neutral elements (x+0, x-0, x*1, x/1, x^1), identity-like nodes (Identity, inference Dropout,
// no-op Cast, Concat of one), Relu∘Relu, Neg∘Neg, Div by a constant → Mul, Transpose rules.
// A rule only bypasses a node when the kept operand already has the node's exact static shape
// and type, so broadcasting can never change the result shape.
#include <cmath>

#include "passes/FloatExact.h"
#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"
#include "passes/layout/TransposeUtil.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

struct NeutralRule {
    const char* id;
    const char* op;
    int constSlot;   ///< which input must be the neutral constant
    double neutral;
    int keepSlot;    ///< input that becomes the output
    bool commutative;
};

const NeutralRule kNeutralRules[] = {
    {"add-zero", "Add", 1, 0.0, 0, true},
    {"sub-zero", "Sub", 1, 0.0, 0, false},
    {"mul-one", "Mul", 1, 1.0, 0, true},
    {"div-one", "Div", 1, 1.0, 0, false},
    {"pow-one", "Pow", 1, 1.0, 0, false},
};

bool onlyFirstOutputRead(const Graph& g, const Node& n) {
    for (size_t i = 1; i < n.outputs.size(); ++i)
        if (n.outputs[i] != kNone && (!g.value(n.outputs[i]).consumers.empty() || g.value(n.outputs[i]).isGraphOutput))
            return false;
    return true;
}

/// Transpose(Transpose(x, p1), p2) = Transpose(x, p1∘p2), when the inner result has no other reader.
void composeTransposes(Rewriter& rw, NodeId id) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    ValueId mid = n.inputs[0];
    NodeId innerId = g.value(mid).producer;
    if (innerId == kNone || g.node(innerId).opType != "Transpose" || !g.node(innerId).domain.empty()) return;
    std::vector<int64_t> p1 = g.node(innerId).attrInts("perm"), p2 = n.attrInts("perm");
    if (p1.empty() || p1.size() != p2.size() || !layoututil::isPermutation(p1) || !layoututil::isPermutation(p2)) return;
    rw.setRule("compose-transposes");
    if (!match::hasSingleReader(rw.graph(), mid)) {
        rw.missed({id, innerId}, "not composed: " + g.node(innerId).displayName() + "'s result has other readers", {mid});
        return;
    }
    std::vector<int64_t> composed(p2.size());
    for (size_t i = 0; i < p2.size(); ++i) composed[i] = p1[static_cast<size_t>(p2[i])];
    const std::string name = n.displayName(), innerName = g.node(innerId).displayName();
    rw.setInput(id, 0, g.node(innerId).inputs[0], name + " reads " + innerName + "'s input directly");
    rw.setAttribute(id, Attribute::makeInts("perm", composed), "perm of " + innerName + " then " + name);
    rw.eraseNode(innerId, "composed into " + name);
    rw.applied({id}, innerName + " and " + name + " composed into one Transpose");
    bool identity = true;
    for (size_t i = 0; i < composed.size(); ++i) identity &= composed[i] == (int64_t)i;
    if (identity) bypass(rw, id, 0, "transpose-identity", "the composed permutation is the identity");
}

/// x / c = x * (1/c) for a float32 constant c whose every element is ±2^k (1/c exact and normal).
/// Any other c is refused: 1/c is then rounded, and x * (1/c) differs from x / c in the last bit
/// for some x (torchvision's x / 0.229 and box decode's dx / 10), which a detector's Floor and
/// NonMaxSuppression turn into a different box (issue #43).
bool divToMul(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const Value& c = g.value(n.inputs[1]);
    if (!c.initializer || c.isGraphInput || c.initializer->dtype != DataType::Float || constantAll(c, 1.0)) return false;
    const Tensor& t = *c.initializer;
    rw.setRule("div-to-mul");
    std::vector<float> inv(static_cast<size_t>(t.elementCount()));
    for (size_t i = 0; i < inv.size(); ++i) {
        const float v = t.as<float>()[i];
        const float r = 1.f / v;
        if (!std::isnormal(r)) {
            rw.missed({id}, "not rewritten: divisor '" + c.name + "' has a zero, huge or subnormal element");
            return false;
        }
        if (!isPowerOfTwoScale(v)) {
            rw.missed({id}, "not rewritten: divisor '" + c.name + "' has an element that is not a power of two (" +
                                Attribute::makeFloat("", v).valueToString() +
                                "), so 1/c is not exact in float32 and x * (1/c) would round differently from x / c");
            return false;
        }
        inv[i] = r;
    }
    const std::string name = n.displayName();
    const ValueId x = n.inputs[0], out = n.outputs[0];  // n is not read after the first edit
    ValueId recip = rw.newInitializer(c.name + "_reciprocal", makeTensorOf(DataType::Float, t.dims, inv));
    NodeId mul = rw.replaceNodes({id}, "Mul", {x, recip}, {out}, {},
                                 name + ": division by a constant is multiplication by its reciprocal", name);
    rw.applied({mul}, name + ": x / c rewritten as x * (1/c)");
    revisit.push_back(mul);
    return true;
}

bool dropout(Rewriter& rw, NodeId id) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    rw.setRule("dropout-inference");
    const bool hasMode = n.inputs.size() > 2 && n.inputs[2] != kNone;
    bool training = hasMode;
    if (hasMode) {  // an initializer or a Constant node (torch exports write a Constant false)
        if (auto t = match::constantOf(g, n.inputs[2]))
            training = t->dtype != DataType::Bool || t->byteSize() == 0 || std::to_integer<int>(t->data.bytes()[0]) != 0;
    }
    if (n.attrInt("is_test", 1) == 0 && n.attr("is_test")) training = true;  // opset < 7
    if (training && n.inputs.size() > 1 && n.inputs[1] != kNone) {
        // A ratio of 0 drops nothing even in training mode (torchvision's Swin exports
        // attention dropout with training_mode=true and ratio 0).
        if (auto ratio = pattern::scalarOf(g, n.inputs[1]); ratio && *ratio == 0.0) training = false;
    }
    if (training) { rw.missed({id}, "not removed: Dropout may run in training mode"); return true; }
    if (!onlyFirstOutputRead(g, n)) { rw.missed({id}, "not removed: the Dropout mask is read"); return true; }
    bypass(rw, id, 0, "dropout-inference", "Dropout is the identity at inference");
    return true;
}

}  // namespace

bool simplifyNeutral(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    const Value& out = g.value(n.outputs[0]);
    const std::string& op = n.opType;

    if (op == "Identity") { bypass(rw, id, 0, "identity", "Identity forwards its input unchanged"); return true; }
    if (op == "Dropout") return dropout(rw, id);
    if (op == "Cast") {
        const Value& in = g.value(n.inputs[0]);
        if (in.type.isTensor() && (int64_t)in.type.elemType == n.attrInt("to", -1))
            bypass(rw, id, 0, "cast-noop", "Cast to the type its input already has");
        return true;
    }
    if ((op == "Relu" || op == "Neg") && g.value(n.inputs[0]).producer != kNone) {
        NodeId p = g.value(n.inputs[0]).producer;
        const Node& pn = g.node(p);
        if (pn.opType != op || !pn.domain.empty()) return false;
        if (op == "Relu") bypass(rw, id, 0, "relu-relu", "Relu(Relu(x)) = Relu(x)");
        else if (pn.inputs[0] != kNone) cancelPair(rw, id, p, pn.inputs[0], "neg-neg", "Neg(Neg(x)) = x");
        return true;
    }
    if (op == "Reshape" && n.inputs.size() > 1 && sameStaticType(g.value(n.inputs[0]), out)) {
        bypass(rw, id, 0, "reshape-noop", "Reshape to the shape its input already has");
        return true;
    }
    if (op == "Transpose") {
        auto perm = n.attrInts("perm");
        bool identity = !perm.empty();
        for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
        if (identity) bypass(rw, id, 0, "transpose-identity", "Transpose with the identity permutation");
        else composeTransposes(rw, id);
        return true;
    }
    if (op == "Concat" && n.inputs.size() == 1) { bypass(rw, id, 0, "concat-of-one", "Concat of a single input"); return true; }
    if (op == "Div" && n.inputs.size() == 2 && n.inputs[1] != kNone && divToMul(rw, id, revisit)) return true;
    for (const NeutralRule& r : kNeutralRules) {
        if (op != r.op || n.inputs.size() != 2 || n.inputs[1] == kNone) continue;
        for (int swap = 0; swap < (r.commutative ? 2 : 1); ++swap) {
            size_t cs = swap ? 0 : (size_t)r.constSlot, ks = swap ? 1 : (size_t)r.keepSlot;
            const Value& c = g.value(n.inputs[cs]);
            if (!constantAll(c, r.neutral)) continue;
            rw.setRule(r.id);
            if (!sameStaticType(g.value(n.inputs[ks]), out)) {
                rw.missed({id}, "not simplified: the other operand's shape or type differs from the output (broadcasting)");
                return true;
            }
            bypass(rw, id, ks, r.id, std::string(r.op) + " with neutral constant '" + c.name + "'");
            return true;
        }
    }
    return false;
}

}  // namespace passlens::passes::algebraic
