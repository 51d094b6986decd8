// ONNX Runtime's GatherSliceToSplitFusion and GatherToSliceFusion (gather_fusion.cc), opset ≥ 13.
//   Gathers of scalar constant indices and Slices of constant start/end (step 1) on one axis of one
//   value, together covering that axis exactly once → Split(splits) (+ Squeeze per scalar Gather).
//   Range → Gather(indices = the Range) → Slice(Unsqueeze(start), Unsqueeze(limit), axis, Unsqueeze(delta)).
#include <algorithm>
#include <map>

#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

/// GetScalarInt64Initializer: an int64 constant of shape [] or [1]; its value and rank.
std::optional<std::pair<int64_t, size_t>> scalarInt64(const Graph& g, ValueId v) {
    if (v == kNone || !isScalarShape(g, v)) return std::nullopt;
    const TensorPtr t = match::constantOf(g, v);
    if (!t || t->dtype != DataType::Int64 || t->elementCount() != 1) return std::nullopt;
    return std::make_pair(t->as<int64_t>()[0], t->dims.size());
}

struct Piece {
    NodeId node = kNone;
    int64_t start = 0, size = 0;
    bool squeeze = false;
};

/// Fuses the Gather/Slice readers of `v` when they qualify; true when it rewrote.
bool fuseReaders(Rewriter& rw, ValueId v) {
    const Graph& g = rw.graph();
    auto shape = shapeOf(g, v);
    if (!shape) return false;
    const int64_t rank = int64_t(shape->rank());
    std::vector<NodeId> candidates;
    for (NodeId c : g.value(v).consumers)
        if ((isOp(g, c, "Gather") || isOp(g, c, "Slice")) && g.node(c).inputs[0] == v &&
            std::find(candidates.begin(), candidates.end(), c) == candidates.end())
            candidates.push_back(c);
    if (candidates.size() < 2) return false;
    auto axisOf = [&](NodeId n) -> std::optional<int64_t> {
        const Node& node = g.node(n);
        int64_t axis = 0;
        if (node.opType == "Gather") {
            axis = node.attrInt("axis", 0);
        } else {
            if (node.inputs.size() < 4) return std::nullopt;
            auto a = scalarInt64(g, node.inputs[3]);
            if (!a) return std::nullopt;
            axis = a->first;
        }
        return axis < 0 ? axis + rank : axis;
    };
    auto refuse = [&](const std::string& why, NodeId at) {
        std::vector<NodeId> nodes{at};
        ort::refuse(rw, nodes, "GatherSliceToSplitFusion: not applied on " + qv(g, v) + " (read by " + std::to_string(candidates.size()) +
                             " Gather/Slice nodes): " + why, {v});
        return false;
    };
    auto axis = axisOf(candidates[0]);
    if (!axis) return false;
    if (*axis < 0 || *axis >= rank || !shape->dims[size_t(*axis)].value)
        return refuse("dim " + std::to_string(*axis) + " of " + shape->toString() + " is not a number", candidates[0]);
    const int64_t dimSize = *shape->dims[size_t(*axis)].value;
    std::vector<bool> consumed(size_t(std::max<int64_t>(dimSize, 0)), false);
    std::vector<Piece> pieces;
    for (NodeId c : candidates) {
        const Node& node = g.node(c);
        Piece p{c, 0, 1, false};
        if (axisOf(c) != *axis) return refuse(q(g, c) + " works on another axis", c);
        if (node.opType == "Gather") {
            auto idx = scalarInt64(g, node.inputs[1]);
            if (!idx) return refuse(q(g, c) + "'s indices are not a scalar int64 constant", c);
            p.start = idx->first < 0 ? idx->first + dimSize : idx->first;
            if (p.start < 0 || p.start >= dimSize || consumed[size_t(p.start)]) return refuse(q(g, c) + " overlaps another reader", c);
            consumed[size_t(p.start)] = true;
            p.squeeze = idx->second == 0;
        } else {
            auto s = node.inputs.size() > 2 ? scalarInt64(g, node.inputs[1]) : std::nullopt;
            auto e = node.inputs.size() > 2 ? scalarInt64(g, node.inputs[2]) : std::nullopt;
            if (!s || !e) return refuse(q(g, c) + "'s starts/ends are not scalar int64 constants", c);
            int64_t start = s->first < 0 ? s->first + dimSize : s->first, end = e->first < 0 ? e->first + dimSize : e->first;
            start = std::clamp<int64_t>(start, 0, dimSize);
            end = std::clamp<int64_t>(end, 0, dimSize);
            if (start >= end) return refuse(q(g, c) + " is empty", c);
            if (node.inputs.size() >= 5 && node.inputs[4] != kNone) {
                auto step = scalarInt64(g, node.inputs[4]);
                if (!step || step->first != 1) return refuse(q(g, c) + "'s step is not 1", c);
            }
            for (int64_t i = start; i < end; ++i) {
                if (consumed[size_t(i)]) return refuse(q(g, c) + " overlaps another reader", c);
                consumed[size_t(i)] = true;
            }
            p.start = start;
            p.size = end - start;
        }
        if (match::readerCount(g, node.outputs[0]) == 0) return false;  // a dead reader: DCE's, not ours
        pieces.push_back(p);
    }
    if (std::find(consumed.begin(), consumed.end(), false) != consumed.end())
        return refuse("the readers do not cover all " + std::to_string(dimSize) + " positions of axis " + std::to_string(*axis), candidates[0]);
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.start < b.start; });
    // The Split writes each Slice's output directly, a scalar Gather's output through a Squeeze.
    const std::string reason = "GatherSliceToSplitFusion: the readers of " + qv(g, v) + " become one Split";
    std::vector<NodeId> group;
    std::vector<int64_t> splits;
    std::vector<ValueId> outs;
    for (const Piece& p : pieces) {
        group.push_back(p.node);
        splits.push_back(p.size);
        outs.push_back(g.node(p.node).outputs[0]);
    }
    Shape midShape = *shape;
    midShape.dims[size_t(*axis)] = Dim::of(1);
    const TypeInfo midType = TypeInfo::tensor(g.value(v).type.elemType, midShape);
    ValueId splitSizes = rw.newInitializer("splits", makeTensorOf(DataType::Int64, {int64_t(splits.size())}, splits));
    const Attribute axisAttr = Attribute::makeInt("axis", *axis);
    NodeId split = kNone;
    auto firstSqueeze = std::find_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.squeeze; });
    if (firstSqueeze == pieces.end()) {
        split = rw.replaceNodes(group, "Split", {v, splitSizes}, outs, {axisAttr}, reason,
                                g.node(pieces.back().node).name + "/GatherSliceToSplitFusion");
    } else {
        // The first Squeeze replaces the whole group; the other nodes are added beside it.
        const size_t i0 = size_t(firstSqueeze - pieces.begin());
        ValueId axes = rw.newInitializer("squeeze_axes", makeTensorOf(DataType::Int64, {1}, std::vector<int64_t>{*axis}));
        std::vector<ValueId> splitOuts = outs;
        splitOuts[i0] = rw.newValue("split_output", midType);
        NodeId first = rw.replaceNodes(group, "Squeeze", {splitOuts[i0], axes}, {outs[i0]}, {}, reason, "Squeeze");
        for (size_t i = i0 + 1; i < pieces.size(); ++i) {
            if (!pieces[i].squeeze) continue;
            splitOuts[i] = rw.newValue("split_output", midType);
            rw.addNode("Squeeze", {splitOuts[i], axes}, {outs[i]}, {}, {first}, reason, "Squeeze");
        }
        split = rw.addNode("Split", {v, splitSizes}, splitOuts, {axisAttr}, {first}, reason, "GatherSliceToSplitFusion");
        rw.restoreTopologicalOrder();
    }
    rw.applied({split}, "GatherSliceToSplitFusion: " + std::to_string(pieces.size()) + " Gather/Slice readers of " + qv(g, v) +
                            " fused into one Split on axis " + std::to_string(*axis));
    return true;
}

bool fuseRangeGather(Rewriter& rw, NodeId rangeId) {
    const Graph& g = rw.graph();
    const auto readers = outputNodes(g, rangeId);
    if (readers.size() != 1 || !isOp(g, readers[0], "Gather")) return false;
    NodeId gather = readers[0];
    const Node& gn = g.node(gather);
    const Node& range = g.node(rangeId);
    if (gn.inputs[1] != range.outputs[0]) return false;
    const DataType t = g.value(range.outputs[0]).type.elemType;
    if (t != DataType::Int64 && t != DataType::Int32) return false;
    const std::string reason = "GatherToSliceFusion: Gather by a Range is a Slice";
    ValueId axes = rw.newInitializer("UnsqueezeAxesInitializer", makeTensorOf(DataType::Int64, {1}, std::vector<int64_t>{0}));
    std::vector<ValueId> bounds;
    for (int i = 0; i < 3; ++i)
        bounds.push_back(rw.newValue("unsqueeze_output_" + std::to_string(i), TypeInfo::tensor(t, Shape{{Dim::of(1)}})));
    const int64_t axis = gn.attrInt("axis", 0);
    ValueId sliceAxes = t == DataType::Int64 ? rw.newInitializer("SliceAxesInitializer", makeTensorOf(DataType::Int64, {1}, std::vector<int64_t>{axis}))
                                             : rw.newInitializer("SliceAxesInitializer", makeTensorOf(DataType::Int32, {1}, std::vector<int32_t>{int32_t(axis)}));
    std::vector<ValueId> rangeInputs = range.inputs;
    NodeId slice = rw.replaceNodes({rangeId, gather}, "Slice", {gn.inputs[0], bounds[0], bounds[1], sliceAxes, bounds[2]},
                                   {gn.outputs[0]}, {}, reason, "Slice");
    for (int i = 0; i < 3; ++i)
        rw.addNode("Unsqueeze", {rangeInputs[size_t(i)], axes}, {bounds[size_t(i)]}, {}, {slice}, reason, "Unsqueeze_" + std::to_string(i));
    rw.applied({slice}, "GatherToSliceFusion: " + q(g, slice) + " from a Range and a Gather");
    return true;
}

}  // namespace

std::vector<RewriteRule> gatherSliceToSplitFusion(int64_t opset) {
    // Anchors: every node with one output read more than once, except Shape (ONNX Runtime skips
    // Gathers of a Shape: they are cheap); graph inputs and initializers are tried by the pass.
    return {{"GatherSliceToSplitFusion", {}, "", [opset](Rewriter& rw, NodeId n) {
                 const Graph& g = rw.graph();
                 if (opset < 13 || isOp(g, n, "Shape") || g.node(n).outputs.size() != 1 || outputEdges(g, n) <= 1) return false;
                 return fuseReaders(rw, g.node(n).outputs[0]);
             }}};
}

std::vector<RewriteRule> gatherToSliceFusion() { return {{"GatherToSliceFusion", {"Range"}, "", fuseRangeGather}}; }

/// Graph inputs and initializers read by several Gather/Slice nodes (GatherSliceToSplitFusion's
/// candidate_args beyond node outputs).
bool fuseGatherSliceOnSources(Rewriter& rw, int64_t opset) {
    if (opset < 13) return false;
    const Graph& g = rw.graph();
    bool changed = false;
    std::vector<ValueId> sources(g.inputs().begin(), g.inputs().end());
    sources.insert(sources.end(), g.initializerOrder().begin(), g.initializerOrder().end());
    rw.setRule("GatherSliceToSplitFusion");
    for (ValueId v : sources)
        if (g.hasValue(v) && g.value(v).consumers.size() > 1) changed |= fuseReaders(rw, v);
    rw.setRule({});
    return changed;
}

}  // namespace passlens::passes::ort
