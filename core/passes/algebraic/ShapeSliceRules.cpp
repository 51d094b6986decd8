// One dim of a shape as a 1-element vector: exporters write Unsqueeze(Gather(Shape(x), i), [0])
// (torch.onnx for every `x.size(i)` that goes into a Concat), shape-chain-folding's
// gather-permuted-vector writes Gather(Shape(x), [i]); since opset 15 either is one
// Shape(x, start=i, end=i+1). Left over in a batch- or size-dynamic export after the symbolic
// folding, these chains cost two nodes per dim; as slices they cost none beyond the Shape, and
// equal slices merge (merge-equal-shapes, cse).
#include <algorithm>

#include "passes/algebraic/Rules.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/match/Match.h"

namespace passlens::passes::algebraic {

using namespace passlens::ir;

namespace {

bool isDefaultOp(const Node& n, const char* op) { return n.opType == op && (n.domain.empty() || n.domain == "ai.onnx"); }

}  // namespace

bool unsqueezedDimToShapeSlice(Rewriter& rw, NodeId id, Revisit& revisit) {
    const Graph& g = rw.graph();
    const Node& n = g.node(id);
    // Two spellings of one dim as a 1-element vector: Unsqueeze(Gather(Shape(x), i), [0]) as
    // exported, and Gather(Shape(x), [i]) as gather-permuted-vector leaves it.
    const bool unsqueezed = isDefaultOp(n, "Unsqueeze");
    if (!(unsqueezed || isDefaultOp(n, "Gather")) || n.outputs.size() != 1) return false;
    const NodeId gatherId = unsqueezed ? g.value(n.inputs[0]).producer : id;
    if (gatherId == kNone || !isDefaultOp(g.node(gatherId), "Gather") || g.node(gatherId).inputs.size() != 2) return false;
    const Node& gather = g.node(gatherId);
    if (gather.attrInt("axis", 0) != 0) return false;
    const NodeId shapeId = g.value(gather.inputs[0]).producer;
    if (shapeId == kNone || !isDefaultOp(g.node(shapeId), "Shape") || g.node(shapeId).inputs.empty()) return false;
    const Node& shape = g.node(shapeId);
    // Preconditions that say nothing about the graph's meaning fail silently: most Unsqueezes
    // are not this pattern at all.
    if (pattern::defaultOpset(rw.model()) < 15) return false;  // Shape has start/end since opset 15
    if (unsqueezed) {
        auto axes = intsFromAttrOrInput(g, n, "axes", 1);
        if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return false;
    }
    auto index = oneIndexConstant(g, gather.inputs[1], unsqueezed ? 0 : 1);
    const ValueId x = shape.inputs[0];
    auto rank = g.value(x).rank();
    if (!index || !rank) return false;
    rw.setRule("dim-as-shape-slice");
    const ValueId scalar = unsqueezed ? n.inputs[0] : kNone;
    if (unsqueezed && !match::hasSingleReader(g, scalar)) {
        rw.missed({id, gatherId}, "not a Shape slice: " + gather.displayName() + "'s scalar has other readers", {scalar});
        return true;
    }
    // The dims Shape reads: [start, end) after ONNX's negative-index and clamping rules.
    const int64_t r = (int64_t)*rank;
    auto clampIndex = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t start = clampIndex(shape.attrInt("start", 0));
    const int64_t end = std::max(start, clampIndex(shape.attrInt("end", r)));
    int64_t i = *index < 0 ? *index + (end - start) : *index;
    if (i < 0 || i >= end - start) return false;  // out of range: the original fails at run time
    const int64_t dim = start + i;
    const ValueId out = n.outputs[0];
    const std::string name = n.displayName(), gatherName = gather.displayName();
    const std::string why = (unsqueezed ? name + " of " + gatherName : name) + " is dim " + std::to_string(dim) + " of '" +
                            g.value(x).name + "' as a 1-element vector: Shape(start=" + std::to_string(dim) +
                            ", end=" + std::to_string(dim + 1) + ")";
    const NodeId sliced = rw.replaceNodes({id}, "Shape", {x}, {out},
                                          {Attribute::makeInt("start", dim), Attribute::makeInt("end", dim + 1)}, why, name);
    if (unsqueezed && rw.graph().value(scalar).consumers.empty() && !rw.graph().value(scalar).isGraphOutput)
        rw.eraseNode(gatherId, why);
    rw.applied({sliced}, why);
    revisit.push_back(sliced);
    return true;
}

}  // namespace passlens::passes::algebraic
