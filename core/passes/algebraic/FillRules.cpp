// gather-of-fill: Gather(data, idx) of a 1-D data whose every element holds the same value c
// (a ConstantOfShape or a constant of equal elements, then only moved or selected: Reshape,
// Unsqueeze, Squeeze, Flatten, Expand, Identity, Gather, Slice, Split, Transpose, Tile) is
// ConstantOfShape(Shape(idx), c): each gathered element is c, and the result has idx's shape.
// torchvision's RPN writes it: the level of every anchor (`torch.full((n,), 0)` for one feature
// level) is gathered by the top-k indices and then by two NonZero filters before batched NMS. The
// chain that selected the fill dies; the rule applies only when more nodes die than the two it adds.
#include <set>

#include "passes/SymbolicRewrites.h"
#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

/// Ops whose output elements are all elements of their first input.
bool selectsFromFirstInput(const Node& n) {
    static const std::set<std::string> kOps{"Reshape", "Unsqueeze", "Squeeze", "Flatten", "Expand", "Identity",
                                            "Gather",  "Slice",     "Split",   "Transpose", "Tile"};
    return match::inDefaultDomain(n) && kOps.count(n.opType) > 0 && !n.inputs.empty() && n.inputs[0] != kNone;
}

struct Fill {
    TensorPtr value;  ///< one element
    int dying = 0;    ///< nodes read only along the chain: they go with the Gather
};

/// The value every element of `v` holds when `v` selects from a uniform fill, and how many of the
/// nodes computing it are read only along the chain.
std::optional<Fill> fillBehind(const Graph& g, ValueId v) {
    Fill f;
    bool exclusive = true;
    for (int depth = 0; depth < 16 && v != kNone; ++depth) {
        exclusive = exclusive && match::hasSingleReader(g, v);
        const NodeId p = g.value(v).producer;
        if (p != kNone && g.node(p).opType == "ConstantOfShape" && match::inDefaultDomain(g.node(p))) {
            f.value = uniformFill(g, v);
            if (!f.value) return std::nullopt;
            if (exclusive) {
                ++f.dying;
                const Node& cos = g.node(p);
                const ValueId s = cos.inputs.empty() ? kNone : cos.inputs[0];
                const NodeId sp = s == kNone ? kNone : g.value(s).producer;
                if (sp != kNone && g.node(sp).opType == "Shape" && match::hasSingleReader(g, s)) ++f.dying;
            }
            return f;
        }
        if (p == kNone || !selectsFromFirstInput(g.node(p))) {
            f.value = uniformFill(g, v);  // a constant of equal elements
            if (!f.value) return std::nullopt;
            return f;
        }
        // A node with other outputs in use stays; so does everything above it.
        for (ValueId o : g.node(p).outputs)
            if (o != v && o != kNone && (!g.value(o).consumers.empty() || g.value(o).isGraphOutput)) exclusive = false;
        if (exclusive) ++f.dying;
        v = g.node(p).inputs[0];
    }
    return std::nullopt;
}

}  // namespace

bool gatherOfFill(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    if (n.opType != "Gather" || !match::inDefaultDomain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    const ValueId data = n.inputs[0], idx = n.inputs[1], out = n.outputs[0];
    if (data == kNone || idx == kNone || out == kNone || g.value(data).rank() != size_t(1)) return false;
    if (g.value(data).isConstant()) return false;  // constant folding's business when idx is constant too
    if (pattern::defaultOpset(rw.model()) < 9) return false;  // ConstantOfShape
    auto fill = fillBehind(g, data);
    if (!fill || fill->dying + 1 <= 2) return false;
    rw.setRule("gather-of-fill");
    const std::string name = n.displayName();
    const std::string why = name + " gathers from a tensor whose every element is the same: that value in the indices' shape";
    const auto idxRank = g.value(idx).rank();
    Shape shapeOfShape;
    if (idxRank) shapeOfShape.dims.push_back(Dim::of((int64_t)*idxRank));
    const ValueId shape = rw.newValue(name + "_indices_shape", TypeInfo::tensor(DataType::Int64, idxRank ? std::optional<Shape>(shapeOfShape) : std::nullopt));
    rw.addNode("Shape", {idx}, {shape}, {}, {}, why, name + "_indices_shape");
    const NodeId c = rw.replaceNodes({id}, "ConstantOfShape", {shape}, {out}, {Attribute::makeTensor("value", fill->value)}, why, name);
    rw.applied({c}, why);
    rw.restoreTopologicalOrder();
    revisit.push_back(c);
    return true;
}

}  // namespace passlens::passes::algebraic
