// ONNX Runtime's ReshapeFusion (reshape_fusion.cc), the part that fires after MatMulAddFusion:
// contiguous Reshapes (each read only by the next) whose final shape is fully known become one
// Reshape to that shape (FuseContiguousReshapes), and a Reshape whose target is a Concat of
// constants and Shape chains becomes a Reshape to a constant target (Fuse_Subgraph): an entry
// Unsqueeze(Gather(Shape(r), k)) at position k, with r the input or of the input's shape, becomes
// 0, a constant stays as it is (a 0 in it too), and one more entry whose shape says one element
// becomes -1; the chain is left to dead-code removal. Shapes are ONNX Runtime's (OrtShapeScope).
#include "ir/IntsText.h"
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
    // Read both Reshapes before the first edit: they are replaced below.
    const std::string name = r2.name;
    const ValueId x = r1.inputs[0], out = r2.outputs[0];
    ValueId target = rw.newInitializer(name + "_shape", makeTensorOf(DataType::Int64, {int64_t(dims.size())}, dims));
    NodeId merged = rw.replaceNodes({first, second}, "Reshape", {x, target}, {out}, {},
                                    "ReshapeFusion: contiguous Reshapes are one Reshape", name.empty() ? "Reshape" : name);
    rw.applied({merged}, "ReshapeFusion: " + what + " merged into one Reshape to " + shape->toString());
    return true;
}

/// Match_Shape: the Shape reads the Reshape's input itself, or a value whose shape ONNX Runtime
/// knows to be the input's (CompareShape: the same rank, each dim the same number or symbol).
bool sameShapeForOrt(const Graph& g, ValueId source, ValueId x) {
    if (source == x) return true;
    auto a = shapeOf(g, source), b = shapeOf(g, x);
    if (!a || !b || a->rank() != b->rank()) return false;
    for (size_t i = 0; i < a->rank(); ++i) {
        const Dim &da = a->dims[i], &db = b->dims[i];
        const bool same = (da.isStatic() && db.isStatic() && *da.value == *db.value) || (!da.param.empty() && da.param == db.param);
        if (!same) return false;
    }
    return true;
}

/// Is_One_Element_Input: ONNX Runtime's shape of `v` is known and holds one element.
bool oneElement(const Graph& g, ValueId v) {
    auto s = shapeOf(g, v);
    if (!s || !s->isStatic()) return false;
    int64_t n = 1;
    for (int64_t d : s->staticDims()) n *= d;
    return n == 1;
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
            target.insert(target.end(), values->begin(), values->end());  // a 0 keeps copying the input's dim
            continue;
        }
        // Unsqueeze(Gather(Shape(root), k)) with k this position and root's dim k the input's.
        const NodeId unsq = producer(g, piece, "Unsqueeze");
        const NodeId gather = unsq != kNone ? producer(g, g.node(unsq).inputs[0], "Gather") : kNone;
        const NodeId shape = gather != kNone ? producer(g, g.node(gather).inputs[0], "Shape") : kNone;
        if (shape != kNone && g.node(gather).attrInt("axis", 0) == 0) {
            const TensorPtr idx = match::constantOf(g, g.node(gather).inputs[1]);
            auto k = idx && idx->elementCount() == 1 ? layoututil::intValues(*idx) : std::nullopt;
            if (k && (*k)[0] == int64_t(pos) && sameShapeForOrt(g, g.node(shape).inputs[0], x)) {
                target.push_back(0);
                continue;
            }
        }
        // Anything else ONNX Runtime's shapes say holds one element may be the one -1.
        if (!oneElement(g, piece)) return false;
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
