// Algebraic simplification: a catalog of named rules, each with its precondition. A rule only
// bypasses a node when the kept operand already has the node's exact static shape and type, so
// broadcasting can never change the result shape.
#include <cmath>
#include <cstring>
#include <optional>

#include "passes/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

bool sameStaticType(const Value& a, const Value& b) {
    if (!a.type.isTensor() || !b.type.isTensor() || a.type.elemType != b.type.elemType) return false;
    if (!a.type.shape || !b.type.shape || a.type.shape->dims.size() != b.type.shape->dims.size()) return false;
    for (size_t i = 0; i < a.type.shape->dims.size(); ++i) {
        const Dim& x = a.type.shape->dims[i];
        const Dim& y = b.type.shape->dims[i];
        if (!x.isStatic() || !y.isStatic() || *x.value != *y.value) return false;
    }
    return true;
}

/// True when `v` is a constant whose every element equals `k` (float, double or integer types).
bool constantAll(const Value& v, double k) {
    if (!v.initializer) return false;
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

struct Rule {
    const char* id;
    const char* op;
    int constSlot;   ///< which input must be the neutral constant (-1: none)
    double neutral;
    int keepSlot;    ///< input that becomes the output
    bool commutative;
};

// Neutral elements: x+0, 0+x, x-0, x*1, 1*x, x/1, x^1.
const Rule kNeutralRules[] = {
    {"add-zero", "Add", 1, 0.0, 0, true},
    {"sub-zero", "Sub", 1, 0.0, 0, false},
    {"mul-one", "Mul", 1, 1.0, 0, true},
    {"div-one", "Div", 1, 1.0, 0, false},
    {"pow-one", "Pow", 1, 1.0, 0, false},
};

class AlgebraicPass final : public Pass {
public:
    std::string name() const override { return "algebraic"; }
    std::string description() const override { return "Removes no-op arithmetic and identity-like nodes (x+0, x*1, Identity, Dropout, ...)"; }

protected:
    void runImpl(PassContext& ctx) const override {
        ctx.forEachGraph([&](Rewriter& rw) {
            Graph& g = rw.graph();
            std::vector<NodeId> order = g.nodeOrder();
            for (NodeId id : order)
                if (g.hasNode(id)) simplify(rw, id);
            rw.setRule({});
        });
    }

private:
    static bool onlyFirstOutputRead(const Graph& g, const Node& n) {
        for (size_t i = 1; i < n.outputs.size(); ++i)
            if (n.outputs[i] != kNone && (!g.value(n.outputs[i]).consumers.empty() || g.value(n.outputs[i]).isGraphOutput))
                return false;
        return true;
    }

    static void bypass(Rewriter& rw, NodeId id, size_t in, const std::string& rule, const std::string& why) {
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

    /// Transpose(Transpose(x, p1), p2) = Transpose(x, p1∘p2), when the inner result has no other reader.
    static void composeTransposes(Rewriter& rw, NodeId id) {
        Graph& g = rw.graph();
        const Node& n = g.node(id);
        ValueId mid = n.inputs[0];
        NodeId innerId = g.value(mid).producer;
        if (innerId == kNone || g.node(innerId).opType != "Transpose" || !g.node(innerId).domain.empty()) return;
        std::vector<int64_t> p1 = g.node(innerId).attrInts("perm"), p2 = n.attrInts("perm");
        if (p1.empty() || p1.size() != p2.size()) return;
        rw.setRule("compose-transposes");
        if (g.value(mid).consumers.size() != 1 || g.value(mid).isGraphOutput || rw.isCapturedBySubgraph(mid)) {
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

    /// x / c = x * (1/c) for a float32 constant c with no zero or subnormal element.
    static bool divToMul(Rewriter& rw, NodeId id) {
        Graph& g = rw.graph();
        const Node& n = g.node(id);
        const Value& c = g.value(n.inputs[1]);
        if (!c.initializer || c.isGraphInput || c.initializer->dtype != DataType::Float || constantAll(c, 1.0)) return false;
        const Tensor& t = *c.initializer;
        rw.setRule("div-to-mul");
        std::vector<float> inv(static_cast<size_t>(t.elementCount()));
        for (size_t i = 0; i < inv.size(); ++i) {
            const float r = 1.f / t.as<float>()[i];
            if (!std::isnormal(r)) {
                rw.missed({id}, "not rewritten: divisor '" + c.name + "' has a zero, huge or subnormal element");
                return false;
            }
            inv[i] = r;
        }
        const std::string name = n.displayName();
        ValueId recip = rw.newInitializer(c.name + "_reciprocal", makeTensorOf(DataType::Float, t.dims, inv));
        rw.replaceNodes({id}, "Mul", {n.inputs[0], recip}, {n.outputs[0]}, {},
                        name + ": division by a constant is multiplication by its reciprocal", name);
        rw.applied({}, name + ": x / c rewritten as x * (1/c)");
        return true;
    }

    static void simplify(Rewriter& rw, NodeId id) {
        Graph& g = rw.graph();
        const Node& n = g.node(id);
        if (!n.domain.empty() && n.domain != "ai.onnx") return;
        if (n.inputs.empty() || n.inputs[0] == kNone || n.outputs.empty() || n.outputs[0] == kNone) return;
        const Value& out = g.value(n.outputs[0]);
        const std::string& op = n.opType;

        if (op == "Identity") { bypass(rw, id, 0, "identity", "Identity forwards its input unchanged"); return; }
        if (op == "Dropout") {
            rw.setRule("dropout-inference");
            bool training = n.inputs.size() > 2 && n.inputs[2] != kNone &&
                            !(g.value(n.inputs[2]).initializer && constantAll(g.value(n.inputs[2]), 0.0));
            if (n.inputs.size() > 2 && n.inputs[2] != kNone && g.value(n.inputs[2]).initializer &&
                g.value(n.inputs[2]).initializer->dtype == DataType::Bool)
                training = g.value(n.inputs[2]).initializer->byteSize() > 0 &&
                           std::to_integer<int>(g.value(n.inputs[2]).initializer->data.bytes()[0]) != 0;
            if (training) { rw.missed({id}, "not removed: Dropout may run in training mode"); return; }
            if (!onlyFirstOutputRead(g, n)) { rw.missed({id}, "not removed: the Dropout mask is read"); return; }
            bypass(rw, id, 0, "dropout-inference", "Dropout is the identity at inference");
            return;
        }
        if (op == "Cast") {
            const Value& in = g.value(n.inputs[0]);
            if (in.type.isTensor() && (int64_t)in.type.elemType == n.attrInt("to", -1))
                bypass(rw, id, 0, "cast-noop", "Cast to the type its input already has");
            return;
        }
        if ((op == "Relu" || op == "Neg") && g.value(n.inputs[0]).producer != kNone) {
            NodeId p = g.value(n.inputs[0]).producer;
            const Node& pn = g.node(p);
            if (pn.opType != op || !pn.domain.empty()) return;
            if (op == "Relu") {
                bypass(rw, id, 0, "relu-relu", "Relu(Relu(x)) = Relu(x)");
            } else if (pn.inputs[0] != kNone) {
                rw.setRule("neg-neg");
                ValueId x = pn.inputs[0];
                ValueId o = n.outputs[0];
                if (g.value(o).isGraphOutput || rw.isCapturedBySubgraph(o)) { rw.missed({id}, "not removed: Neg(Neg(x)) output is a graph output"); return; }
                std::string name = n.displayName();
                rw.replaceAllUsesWith(o, x, "Neg(Neg(x)) = x");
                rw.eraseNode(id, "Neg(Neg(x)) = x");
                rw.applied({}, name + ": Neg(Neg(x)) = x");
            }
            return;
        }
        if (op == "Reshape" && n.inputs.size() > 1 && sameStaticType(g.value(n.inputs[0]), out)) {
            bypass(rw, id, 0, "reshape-noop", "Reshape to the shape its input already has");
            return;
        }
        if (op == "Transpose") {
            auto perm = n.attrInts("perm");
            bool identity = !perm.empty();
            for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == (int64_t)i;
            if (identity) { bypass(rw, id, 0, "transpose-identity", "Transpose with the identity permutation"); return; }
            composeTransposes(rw, id);
            return;
        }
        if (op == "Concat" && n.inputs.size() == 1) { bypass(rw, id, 0, "concat-of-one", "Concat of a single input"); return; }
        if (op == "Div" && n.inputs.size() == 2 && divToMul(rw, id)) return;
        for (const Rule& r : kNeutralRules) {
            if (op != r.op || n.inputs.size() != 2 || n.inputs[1] == kNone) continue;
            for (int swap = 0; swap < (r.commutative ? 2 : 1); ++swap) {
                size_t cs = swap ? 0 : (size_t)r.constSlot, ks = swap ? 1 : (size_t)r.keepSlot;
                const Value& c = g.value(n.inputs[cs]);
                if (!constantAll(c, r.neutral)) continue;
                rw.setRule(r.id);
                if (!sameStaticType(g.value(n.inputs[ks]), out)) {
                    rw.missed({id}, std::string("not simplified: the other operand's shape or type differs from the output (broadcasting)"));
                    return;
                }
                bypass(rw, id, ks, r.id, std::string(r.op) + " with neutral constant '" + c.name + "'");
                return;
            }
        }
    }
};

}  // namespace

std::unique_ptr<Pass> makeAlgebraicPass() { return std::make_unique<AlgebraicPass>(); }

}  // namespace passlens::passes
