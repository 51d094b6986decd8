// GELU in its erf form x·0.5·(1 + erf(x/√2)) and tanh form 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
// The Gelu op arrived in opset 20: a model at opset 20 or later gets one Gelu node per occurrence
// (approximate="tanh" for the tanh form); below that each is left as is with a missed remark
// naming the opset it needs.
#include <algorithm>
#include <cmath>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

constexpr int64_t kGeluOpset = 20;

/// Readers of `v` that are default-domain `op` nodes.
std::vector<NodeId> readersOfType(const Graph& g, ValueId v, const std::string& op) {
    std::vector<NodeId> out;
    for (NodeId c : g.value(v).consumers)
        if (isOp(g.node(c), op)) out.push_back(c);
    return out;
}

/// The node after "1 + t": Add(t, 1) and the Mul(s) that multiply it by x and 0.5.
bool onePlusTimesHalfX(const Graph& g, ValueId t, ValueId x, std::vector<NodeId>& nodes) {
    for (NodeId add : readersOfType(g, t, "Add")) {
        if (!near(scalarOf(g, otherInput(g.node(add), t)).value_or(0), 1.0)) continue;
        ValueId a = g.node(add).outputs[0];
        for (NodeId mul : readersOfType(g, a, "Mul")) {
            ValueId other = otherInput(g.node(mul), a);
            NodeId half = producerOf(g, other, "Mul");
            if (other == x) {
                // (1+t)·x, then ·0.5
                for (NodeId m2 : readersOfType(g, g.node(mul).outputs[0], "Mul"))
                    if (near(scalarOf(g, otherInput(g.node(m2), g.node(mul).outputs[0])).value_or(0), 0.5)) {
                        nodes.insert(nodes.end(), {add, mul, m2});
                        return true;
                    }
            } else if (half != kNone && otherInput(g.node(half), x) != kNone &&
                       near(scalarOf(g, otherInput(g.node(half), x)).value_or(0), 0.5)) {
                nodes.insert(nodes.end(), {half, add, mul});
                return true;
            }
        }
    }
    return false;
}

/// x³ as Pow(x, 3), x·x·x or x·(x·x): its nodes, or empty.
std::vector<NodeId> cubeOf(const Graph& g, ValueId c, ValueId x) {
    if (NodeId pow = producerOf(g, c, "Pow"); pow != kNone && g.node(pow).inputs[0] == x &&
                                              near(scalarOf(g, g.node(pow).inputs[1]).value_or(0), 3.0))
        return {pow};
    NodeId outer = producerOf(g, c, "Mul");
    if (outer == kNone || g.node(outer).inputs.size() != 2) return {};
    ValueId square = otherInput(g.node(outer), x);
    NodeId inner = producerOf(g, square, "Mul");
    if (inner == kNone || g.node(inner).inputs.size() != 2 || g.node(inner).inputs[0] != x || g.node(inner).inputs[1] != x) return {};
    return {inner, outer};
}

}  // namespace

std::vector<ActivationForm> findGeluForms(const Graph& g) {
    std::vector<ActivationForm> found;
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (isOp(n, "Erf")) {
            // erf(x/√2): Div by √2 or Mul by 1/√2.
            NodeId scale = g.value(n.inputs[0]).producer;
            if (scale == kNone || g.node(scale).inputs.size() != 2) continue;
            const Node& s = g.node(scale);
            auto c = scalarOf(g, s.inputs[1]);
            if (!c || !((isOp(s, "Div") && near(*c, std::sqrt(2.0), 1e-4)) || (isOp(s, "Mul") && near(*c, std::sqrt(0.5), 1e-4))))
                continue;
            std::vector<NodeId> nodes{scale, id};
            if (!onePlusTimesHalfX(g, n.outputs[0], s.inputs[0], nodes)) continue;
            found.push_back({nodes, s.inputs[0], g.node(nodes.back()).outputs[0], id, "GELU (erf form)", "Gelu"});
        } else if (isOp(n, "Tanh")) {
            // tanh(√(2/π)·(x + 0.044715·x³))
            NodeId scale = producerOf(g, n.inputs[0], "Mul");
            if (scale == kNone || g.node(scale).inputs.size() != 2) continue;
            ValueId inner = kNone;
            for (size_t i = 0; i < 2; ++i)
                if (near(scalarOf(g, g.node(scale).inputs[i]).value_or(0), std::sqrt(2.0 / M_PI), 1e-4)) inner = g.node(scale).inputs[1 - i];
            NodeId add = producerOf(g, inner, "Add");
            if (add == kNone || g.node(add).inputs.size() != 2) continue;
            ValueId x = kNone;
            std::vector<NodeId> cube;
            for (size_t i = 0; i < 2; ++i) {
                NodeId cubic = producerOf(g, g.node(add).inputs[i], "Mul");
                if (cubic == kNone || g.node(cubic).inputs.size() != 2) continue;
                for (size_t j = 0; j < 2; ++j)
                    if (near(scalarOf(g, g.node(cubic).inputs[j]).value_or(0), 0.044715, 1e-3)) {
                        x = g.node(add).inputs[1 - i];
                        cube = cubeOf(g, g.node(cubic).inputs[1 - j], x);
                        cube.push_back(cubic);
                    }
            }
            if (x == kNone) continue;
            std::vector<NodeId> nodes = cube;
            nodes.insert(nodes.end(), {add, scale, id});
            if (!onePlusTimesHalfX(g, n.outputs[0], x, nodes)) continue;
            // The output: the one node whose result no other node of the form reads.
            ValueId out = kNone;
            for (NodeId m : nodes) {
                ValueId v = g.node(m).outputs[0];
                bool readInside = false;
                for (NodeId c : g.value(v).consumers) readInside |= std::find(nodes.begin(), nodes.end(), c) != nodes.end();
                if (!readInside) out = v;
            }
            found.push_back({nodes, x, out, id, "GELU (tanh form)", "GeluTanh"});
        }
    }
    return found;
}

void FuseGelu::runImpl(PassContext& ctx) const {
    const int64_t opset = ctx.model().opsetFor("");
    const std::string needs = "Gelu needs opset " + std::to_string(kGeluOpset) + ", the model imports opset " +
                              std::to_string(opset) + "; left as is";
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("gelu");
        for (const ActivationForm& f : findGeluForms(g)) {
            const std::string where = f.form + " at " + g.node(f.anchor).displayName();
            if (opset < kGeluOpset) {
                rw.missed(f.nodes, where + ": " + needs);
                continue;
            }
            bool intact = true;  // an earlier replacement in this loop may have taken a shared node
            for (NodeId n : f.nodes) intact &= g.hasNode(n);
            if (!intact) continue;
            const DataType type = g.value(f.x).type.elemType;
            if (type != DataType::Float && type != DataType::Float16 && type != DataType::Double &&
                type != DataType::BFloat16) {
                rw.missed(f.nodes, where + ": x is " + std::string(dataTypeName(type)) + ", Gelu takes floating-point types");
                continue;
            }
            bool privateIntermediates = true;
            for (NodeId n : f.nodes) {
                const ValueId v = g.node(n).outputs[0];
                if (v == f.out || !readOutside(g, v, f.nodes)) continue;
                rw.missed(f.nodes, where + ": intermediate '" + g.value(v).name + "' is also read by " + readersOf(g, v),
                          {v});
                privateIntermediates = false;
                break;
            }
            if (!privateIntermediates) continue;
            std::vector<Attribute> attrs;
            const bool tanh = f.function == "GeluTanh";
            if (tanh) attrs.push_back(Attribute::makeString("approximate", "tanh"));
            std::vector<ValueId> constants;  // √2, 0.5, 1, ... that only the pattern read
            for (NodeId n : f.nodes)
                for (ValueId in : g.node(n).inputs)
                    if (in != kNone && constantOf(g, in)) constants.push_back(in);
            NodeId fused = rw.replaceNodes(f.nodes, "Gelu", {f.x}, {f.out}, attrs,
                                           where + ": " + std::to_string(f.nodes.size()) + " nodes compute Gelu" +
                                               (tanh ? " (approximate=tanh)" : ""),
                                           g.node(f.anchor).displayName() + ".gelu");
            rw.applied({fused}, where + ": " + std::to_string(f.nodes.size()) + " nodes fused into Gelu");
            removeUnreadConstants(rw, constants, "read only by the GELU nodes fused into Gelu");
        }
    });
}

std::unique_ptr<Pass> makeFuseGeluPass() { return std::make_unique<FuseGelu>(); }

}  // namespace passlens::passes
