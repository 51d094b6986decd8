// Unsqueeze(f(Squeeze(x, A), s), A) = f(x, s) for an elementwise f whose other operand s (if any)
// holds one element and has no more dims than the squeezed value: s broadcasts the same way
// over x as over its squeezed view, so f(x, s) has x's shape and the same elements.
// torch.onnx writes this for per-column arithmetic on a box tensor (torchvision's
// resize_boxes: `xmin, ymin, xmax, ymax = boxes.unbind(1); xmin * ratio_w; stack(..., dim=1)`),
// which a static export folds away (ratio 1) and a size-dynamic one keeps, 2 nodes per column.
#include <set>

#include "passes/algebraic/Rules.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {


bool isElementwiseUnary(const std::string& op) {
    static const std::set<std::string> kOps{"Relu", "Neg", "Abs", "Exp", "Log", "Sigmoid", "Tanh", "Sqrt", "Floor",
                                            "Ceil", "Reciprocal", "Erf", "Sign", "Round", "Sin", "Cos", "Not", "Identity"};
    return kOps.count(op) > 0;
}

bool isElementwiseBinary(const std::string& op) {
    static const std::set<std::string> kOps{"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "And", "Or", "Xor",
                                            "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
    return kOps.count(op) > 0;
}

/// Axes as a set of non-negative indices into a tensor of rank `rank`.
std::optional<std::set<int64_t>> normalizedAxes(const std::vector<int64_t>& axes, std::optional<size_t> rank) {
    std::set<int64_t> s;
    for (int64_t a : axes) {
        if (a < 0) {
            if (!rank) return std::nullopt;
            a += (int64_t)*rank;
        }
        if (!s.insert(a).second) return std::nullopt;
    }
    return s;
}

}  // namespace

bool elementwiseThroughSqueeze(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.opType != "Unsqueeze" || !match::inDefaultDomain(n) || n.outputs.size() != 1) return false;
    const ValueId mid = n.inputs[0];
    const NodeId fId = g.value(mid).producer;
    if (fId == kNone || !match::hasSingleReader(g, mid) || g.value(mid).isGraphOutput) return false;
    const Node& f = g.node(fId);
    if (!match::inDefaultDomain(f) || f.outputs.size() != 1) return false;
    const bool unary = isElementwiseUnary(f.opType) && f.inputs.size() == 1;
    const bool binary = isElementwiseBinary(f.opType) && f.inputs.size() == 2;
    if (!unary && !binary) return false;
    // Which operand is the squeezed one (the first that is).
    size_t slot = f.inputs.size();
    for (size_t i = 0; i < f.inputs.size() && slot == f.inputs.size(); ++i) {
        const NodeId p = f.inputs[i] == kNone ? kNone : g.value(f.inputs[i]).producer;
        if (p != kNone && g.node(p).opType == "Squeeze" && match::inDefaultDomain(g.node(p))) slot = i;
    }
    if (slot == f.inputs.size()) return false;
    const ValueId squeezed = f.inputs[slot];
    const NodeId sqId = g.value(squeezed).producer;
    const Node& sq = g.node(sqId);
    if (!match::hasSingleReader(g, squeezed) || g.value(squeezed).isGraphOutput) return false;
    const ValueId x = sq.inputs[0];
    bool sqHas = false;
    auto sqAxes = intsFromAttrOrInput(g, sq, "axes", 1, &sqHas);
    auto unAxes = intsFromAttrOrInput(g, n, "axes", 1);
    if (!sqHas || !sqAxes || !unAxes) return false;
    const auto xRank = g.value(x).rank();
    auto a = normalizedAxes(*sqAxes, xRank), b = normalizedAxes(*unAxes, xRank);
    if (!a || !b || *a != *b || !xRank) return false;
    const size_t squeezedRank = *xRank - a->size();
    if (binary) {
        const ValueId s = f.inputs[1 - slot];
        auto sDims = g.value(s).staticDims();
        if (!sDims || sDims->size() > squeezedRank) return false;
        for (int64_t d : *sDims)
            if (d != 1) return false;
    }
    rw.setRule("elementwise-through-squeeze");
    std::vector<ValueId> inputs = f.inputs;
    inputs[slot] = x;
    const std::string name = n.displayName();
    const std::string why = n.displayName() + "(" + f.displayName() + "(" + sq.displayName() +
                            "(x))) = " + f.opType + "(x" + (binary ? ", a one-element operand" : "") +
                            "): the Squeeze and Unsqueeze use the same axes";
    const std::vector<Attribute> attrs = f.attributes;
    const std::string opType = f.opType;
    const NodeId fused = rw.replaceNodes({sqId, fId, id}, opType, inputs, {n.outputs[0]}, attrs, why, f.displayName());
    rw.applied({fused}, why);
    revisit.push_back(fused);
    return true;
}

}  // namespace passlens::passes::algebraic
