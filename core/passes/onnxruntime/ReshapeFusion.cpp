// ONNX Runtime's ReshapeFusion (reshape_fusion.cc), the part that fires after MatMulAddFusion:
// contiguous Reshapes (each read only by the next) whose final shape is fully known become one
// Reshape to that shape (FuseContiguousReshapes), and a Reshape whose target is a Concat of
// constants and Shape chains becomes a Reshape to a constant target (Fuse_Subgraph): an entry
// Unsqueeze(Gather(Shape(r), k)) at position k, with r's dim k the input's (the same value or the
// same graph-input symbol), becomes 0, a nonzero constant stays, and one more entry of one
// element becomes -1; the chain is left to dead-code removal.
#include "ir/IntsText.h"
#include "passes/ShapeChain.h"
#include "passes/layout/TransposeUtil.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

bool fuseContiguous(Rewriter& rw, NodeId second) {
    const Graph& g = rw.graph();
    const Node& r2 = g.node(second);
    NodeId first = producer(g, r2.inputs[0], "Reshape");
    if (first == kNone) return false;
    const Node& r1 = g.node(first);
    if (outputEdges(g, first) != 1 || producesGraphOutput(g, first) || !match::subgraphReaders(g, r1.outputs[0]).empty()) {
        refuse(rw, {first, second}, "ReshapeFusion: " + q(g, first) + " and " + q(g, second) + " not merged: the first Reshape's output is " +
                                       readBy(g, first) + (producesGraphOutput(g, first) ? " and a graph output" : ""),
                  {r1.outputs[0]});
        return false;
    }
    auto shape = shapeOf(g, r2.outputs[0]);
    if (!shape || !shape->isStatic()) {
        refuse(rw, {first, second}, "ReshapeFusion: " + q(g, first) + " and " + q(g, second) + " not merged: the result shape " +
                                       (shape ? shape->toString() : std::string("?")) + " is not fully known",
                  {r2.outputs[0]});
        return false;
    }
    const std::vector<int64_t> dims = shape->staticDims();
    const std::string what = q(g, first) + " + " + q(g, second);
    ValueId target = rw.newInitializer(r2.name + "_shape", makeTensorOf(DataType::Int64, {int64_t(dims.size())}, dims));
    NodeId merged = rw.replaceNodes({first, second}, "Reshape", {r1.inputs[0], target}, {r2.outputs[0]}, {},
                                    "ReshapeFusion: contiguous Reshapes are one Reshape", r2.name.empty() ? "Reshape" : r2.name);
    rw.applied({merged}, "ReshapeFusion: " + what + " merged into one Reshape to " + shape->toString());
    return true;
}

/// Dim `k` of `source` is dim `k` of `x` as ONNX Runtime's shape inference sees it: the same
/// value, or both dims carry the same symbol of a graph input (which inference propagates);
/// symbols PassLens's own shape engine derives (data-dependent sizes) are not ONNX Runtime's.
bool sameDimForOrt(const Graph& g, ValueId source, ValueId x, size_t k) {
    if (source == x) return true;
    auto a = dimOf(g, source, k), b = dimOf(g, x, k);
    if (!a || !b || a->param.empty() || a->param != b->param) return false;
    for (ValueId in : g.inputs()) {
        const TypeInfo& t = g.value(in).type;
        if (!t.shape) continue;
        for (const Dim& d : t.shape->dims)
            if (d.param == a->param) return true;
    }
    return false;
}

bool fuseShapeSubgraph(Rewriter& rw, NodeId reshapeId) {
    const Graph& g = rw.graph();
    const Node& reshape = g.node(reshapeId);
    if (reshape.inputs.size() < 2 || match::constantOf(g, reshape.inputs[1])) return false;
    const NodeId concat = producer(g, reshape.inputs[1], "Concat");
    if (concat == kNone || outputEdges(g, concat) != 1 || producesGraphOutput(g, concat)) return false;
    if (reshape.attrInt("allowzero", 0) != 0) return false;
    const ValueId x = reshape.inputs[0];
    std::vector<int64_t> target;
    for (ValueId piece : g.node(concat).inputs) {
        const size_t pos = target.size();
        if (const TensorPtr c = match::constantOf(g, piece)) {
            auto values = layoututil::intValues(*c);
            if (!values) return false;
            for (int64_t v : *values) {
                // A constant 0 would copy the input's dim: ONNX Runtime does not take that meaning on.
                if (v == 0) return false;
                target.push_back(v);
            }
            continue;
        }
        // Unsqueeze(Gather(Shape(root), k)) with k this position and root's dim k the input's.
        const NodeId unsq = producer(g, piece, "Unsqueeze");
        const NodeId gather = unsq != kNone ? producer(g, g.node(unsq).inputs[0], "Gather") : kNone;
        const NodeId shape = gather != kNone ? producer(g, g.node(gather).inputs[0], "Shape") : kNone;
        if (shape != kNone && g.node(gather).attrInt("axis", 0) == 0) {
            const TensorPtr idx = match::constantOf(g, g.node(gather).inputs[1]);
            auto k = idx && idx->elementCount() == 1 ? layoututil::intValues(*idx) : std::nullopt;
            if (k && (*k)[0] == int64_t(pos) && sameDimForOrt(g, g.node(shape).inputs[0], x, pos)) {
                target.push_back(0);
                continue;
            }
        }
        // Anything else of one element may be the one -1.
        auto s = shapeOf(g, piece);
        if (!s || s->rank() != 1 || !s->dims[0].isStatic() || *s->dims[0].value != 1) return false;
        target.push_back(-1);
    }
    int minusOnes = 0;
    for (int64_t v : target) minusOnes += v == -1;
    if (target.empty()) return false;
    if (minusOnes > 1) {
        refuse(rw, {reshapeId, concat}, "ReshapeFusion: the target of " + q(g, reshapeId) + " stays computed: " + std::to_string(minusOnes) +
                                            " of its entries are neither a constant nor the input's dim at the same position (one may be -1)",
               {reshape.inputs[1]});
        return false;
    }
    const std::string what = q(g, reshapeId);
    ValueId shape = rw.newInitializer(g.value(reshape.inputs[1]).name, makeTensorOf(DataType::Int64, {int64_t(target.size())}, target));
    rw.setInput(reshapeId, 1, shape, "ReshapeFusion: the target computed by " + q(g, concat) + " is constant");
    rw.applied({reshapeId}, "ReshapeFusion: the computed target of " + what + " is " + intsText(target));
    return true;
}

}  // namespace

std::vector<RewriteRule> reshapeFusion() {
    return {{"ReshapeFusion", {"Reshape"}, "", fuseContiguous}, {"ReshapeFusion", {"Reshape"}, "", fuseShapeSubgraph}};
}

}  // namespace passlens::passes::ort
