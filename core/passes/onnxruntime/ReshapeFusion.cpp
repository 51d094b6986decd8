// ONNX Runtime's ReshapeFusion (reshape_fusion.cc), the part that fires after MatMulAddFusion:
// contiguous Reshapes (each read only by the next) whose final shape is fully known become one
// Reshape to that shape (FuseContiguousReshapes). The Shape → Gather → Concat → Reshape chains
// it also fuses are folded by the profile's constant folding on static shapes.
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

}  // namespace

std::vector<RewriteRule> reshapeFusion() { return {{"ReshapeFusion", {"Reshape"}, "", fuseContiguous}}; }

}  // namespace passlens::passes::ort
