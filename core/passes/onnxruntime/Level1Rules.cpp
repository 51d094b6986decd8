// ONNX Runtime's Level1_RuleBasedTransformer, the eliminations that fire on exporter output:
// EliminateIdentity, EliminateDropout, CastElimination, ExpandElimination, EliminateSlice and
// NoopElimination (x+0, x-0, x*1, x/1 with a constant that does not broadcast the other input).
// (ConvAdd/ConvMul/ConvBN fusion: the profile runs the standard fuse-conv-scale-shift and
// fuse-conv-bn passes, which fold the same patterns.)
#include <algorithm>
#include <limits>
#include <optional>

#include "passes/layout/TransposeUtil.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

/// ONNX Runtime keeps a node whose output is a graph output when its input is a graph input or
/// an initializer too (the graph would lose the output's name); the Rewriter renames otherwise.
bool canBypass(Rewriter& rw, NodeId n, size_t in) {
    const Graph& g = rw.graph();
    ValueId x = g.node(n).inputs[in], y = g.node(n).outputs[0];
    if (!g.value(y).isGraphOutput) return true;
    if (g.value(x).isGraphOutput || g.value(x).isGraphInput || g.value(x).isConstant() || rw.isCapturedBySubgraph(x)) {
        refuse(rw, {n}, q(g, n) + " kept: its output " + qv(g, y) + " is a graph output and its input " + qv(g, x) +
                           " is a graph input, output or initializer (graph_utils::CanRemoveNode)",
                  {y});
        return false;
    }
    return true;
}

bool bypass(Rewriter& rw, NodeId n, const std::string& why) {
    if (!canBypass(rw, n, 0)) return false;
    const std::string name = q(rw.graph(), n);
    rw.bypassNode(n, 0, 0, name + ": " + why);
    rw.applied({}, name + " removed: " + why);
    return true;
}

bool sameStaticShape(const Graph& g, ValueId a, ValueId b) {
    auto sa = shapeOf(g, a), sb = shapeOf(g, b);
    return sa && sb && sa->isStatic() && sb->isStatic() && sa->staticDims() == sb->staticDims();
}

}  // namespace

std::vector<RewriteRule> level1Rules() {
    std::vector<RewriteRule> rules;
    rules.push_back({"ConstantNodeToInitializer", {"Constant"}, "", [](Rewriter& rw, NodeId n) {
        // Graph::Graph turns every Constant node into an initializer when the model loads, also
        // one whose output is a graph output (a subgraph returning a constant).
        const Graph& g = rw.graph();
        const ValueId out = g.node(n).outputs[0];
        const TensorPtr t = match::constantOf(g, out);
        if (!t) return false;
        rw.foldToConstant(out, t, q(g, n) + " is an initializer once ONNX Runtime loads the model");
        return true;
    }});
    rules.push_back({"ConstantFolding", {"Identity"}, "", [](Rewriter& rw, NodeId n) {
        // ConstantFolding reads an enclosing graph's initializers too (IsConstantInitializer with
        // check_outer_scope): a subgraph's Identity of one becomes the subgraph's own initializer,
        // also when it is the subgraph's output, where EliminateIdentity cannot remove it.
        const Graph& g = rw.graph();
        const TensorPtr t = outerScopeConstant(rw.model(), g, g.node(n).inputs[0]);
        if (!t) return false;
        const std::string what = q(g, n) + " copies " + qv(g, g.node(n).inputs[0]) + ", a constant of the enclosing graph";
        const ValueId folded = rw.foldToConstant(g.node(n).outputs[0], t, what);
        rw.applied({}, "ConstantFolding: " + what + ": " + qv(g, folded) + " is an initializer");
        return true;
    }});
    rules.push_back({"EliminateIdentity", {"Identity"}, "", [](Rewriter& rw, NodeId n) {
        return bypass(rw, n, "Identity forwards its input");
    }});
    rules.push_back({"EliminateDropout", {"Dropout"}, "", [](Rewriter& rw, NodeId n) {
        const Graph& g = rw.graph();
        const Node& d = g.node(n);
        // The mask output must be unused (graph_utils::IsOutputUsed).
        if (d.outputs.size() > 1 && d.outputs[1] != kNone && match::readerCount(g, d.outputs[1]) > 0) {
            refuse(rw, {n}, q(g, n) + " kept: its mask output " + qv(g, d.outputs[1]) + " is read", {d.outputs[1]});
            return false;
        }
        // ONNX Runtime's inference build does not read training_mode (dropout_elimination.cc checks
        // the ratio only under ENABLE_TRAINING): the Dropout goes whatever its value.
        std::string why = "Dropout is the identity at inference";
        if (d.inputs.size() > 2 && d.inputs[2] != kNone) {
            const TensorPtr t = match::constantOf(g, d.inputs[2]);
            bool isFalse = t != nullptr;
            for (size_t i = 0; t && i < t->byteSize(); ++i) isFalse = isFalse && t->data.data()[i] == std::byte{0};
            if (!isFalse) why += " (ONNX Runtime ignores training_mode " + qv(g, d.inputs[2]) + ", which is not a constant false)";
        }
        return bypass(rw, n, why);
    }});
    rules.push_back({"CastElimination", {"Cast"}, "", [](Rewriter& rw, NodeId n) {
        const Graph& g = rw.graph();
        const Node& c = g.node(n);
        const DataType in = g.value(c.inputs[0]).type.elemType;
        if (in == DataType::Undefined || int64_t(in) != c.attrInt("to", -1)) return false;
        return bypass(rw, n, "Cast to the type its input already has");
    }});
    rules.push_back({"ExpandElimination", {"Expand"}, "", [](Rewriter& rw, NodeId n) {
        const Graph& g = rw.graph();
        const Node& e = g.node(n);
        if (!sameStaticShape(g, e.inputs[0], e.outputs[0])) return false;
        return bypass(rw, n, "Expand to the shape its input already has");
    }});
    rules.push_back({"EliminateSlice", {"Slice"}, "", [](Rewriter& rw, NodeId n) {
        // slice_elimination.cc: starts, ends (and axes, steps when present) constant, every start
        // 0, every end INT64_MAX, every step 1; the input's shape is not consulted.
        const Graph& g = rw.graph();
        const Node& s = g.node(n);
        auto ints = [&](size_t slot) -> std::optional<std::vector<int64_t>> {
            if (slot >= s.inputs.size() || s.inputs[slot] == kNone) return std::nullopt;
            const TensorPtr t = match::constantOf(g, s.inputs[slot]);
            if (!t) return std::nullopt;
            return layoututil::intValues(*t);
        };
        auto starts = ints(1), ends = ints(2);
        if (!starts || !ends || starts->empty() || starts->size() != ends->size()) return false;
        const bool hasAxes = s.inputs.size() > 3 && s.inputs[3] != kNone, hasSteps = s.inputs.size() > 4 && s.inputs[4] != kNone;
        if (hasAxes) {
            auto axes = ints(3);
            if (!axes || axes->size() != starts->size()) return false;
            if (hasSteps) {
                auto steps = ints(4);
                if (!steps || steps->size() != starts->size()) return false;
                for (int64_t st : *steps)
                    if (st != 1) return false;
            }
        }
        for (size_t i = 0; i < starts->size(); ++i)
            if ((*starts)[i] != 0 || (*ends)[i] != std::numeric_limits<int64_t>::max()) return false;
        return bypass(rw, n, "Slice from 0 to INT64_MAX takes the whole input");
    }});
    rules.push_back({"NoopElimination", {"Add", "Sub", "Mul", "Div"}, "", [](Rewriter& rw, NodeId n) {
        // noop_elimination.cc: exactly one input is a constant initializer holding at most one
        // element, equal to the op's neutral element, of rank not above the other input's.
        const Graph& g = rw.graph();
        const Node& node = g.node(n);
        if (node.inputs.size() != 2) return false;
        const bool c0 = match::constantOf(g, node.inputs[0]) != nullptr, c1 = match::constantOf(g, node.inputs[1]) != nullptr;
        if (c0 == c1) return false;
        const size_t side = c0 ? 0 : 1;
        const bool additive = node.opType == "Add" || node.opType == "Sub";
        if (side == 0 && (node.opType == "Sub" || node.opType == "Div")) return false;  // 0 - x, 1 / x are not x
        ValueId c = node.inputs[side], x = node.inputs[1 - side];
        const TensorPtr t = match::constantOf(g, c);
        auto sx = shapeOf(g, x);
        if (!sx || t->dims.size() > sx->rank() || t->elementCount() > 1) return false;
        if (t->elementCount() == 1) {
            auto value = constantScalar(g, c);
            if (!value || *value != (additive ? 0.0 : 1.0)) return false;
        }
        if (!canBypass(rw, n, 1 - side)) return false;
        const std::string name = q(g, n), op = node.opType;
        rw.bypassNode(n, 1 - side, 0, name + ": " + op + " by its neutral element");
        rw.applied({}, name + " removed: " + (additive ? "adds 0" : "multiplies by 1"));
        return true;
    }});
    rules.push_back({"DivMulFusion", {"Div"}, "", [](Rewriter& rw, NodeId n) {
        // div_mul_fusion.cc: Mul(x, Div(1, y)) → Div(x, y) for every Mul reading the reciprocal.
        const Graph& g = rw.graph();
        const Node& div = g.node(n);
        if (div.inputs.size() != 2 || !constantEquals(g, div.inputs[0], 1.0) || producesGraphOutput(g, n)) return false;
        const auto readers = outputNodes(g, n);
        if (readers.empty()) return false;
        for (NodeId r : readers)
            if (!isOp(g, r, "Mul")) return false;
        const ValueId y = div.inputs[1], recip = div.outputs[0];
        const std::string name = q(g, n);
        for (NodeId r : readers) {
            const Node& mul = g.node(r);
            ValueId x = mul.inputs[0] == recip ? mul.inputs[1] : mul.inputs[0];
            const std::string mulName = q(g, r);
            NodeId d = rw.replaceNodes({r}, "Div", {x, y}, {mul.outputs[0]}, {}, "DivMulFusion: x · (1 / y) is x / y",
                                       mul.name.empty() ? "Div" : mul.name);
            rw.applied({d}, "DivMulFusion: " + mulName + " · " + name + " → Div");
        }
        if (g.hasNode(n) && outputEdges(g, n) == 0) rw.eraseNode(n, name + " is no longer read");
        return true;
    }});
    // ConvAddFusion, ConvMulFusion (then the standard fuse-conv-bn for ConvBNFusion).
    for (RewriteRule& r : convScaleFusions()) rules.push_back(std::move(r));
    return rules;
}

}  // namespace passlens::passes::ort
