// ONNX Runtime's MatmulTransposeFusion (matmul_transpose_fusion.cc) and MatMulScaleFusion
// (matmul_scale_fusion.cc), both into com.microsoft FusedMatMul.
//   Transpose: a Transpose feeding MatMul whose perm keeps the input's last axis among the last two
//     and its batch dims contiguous becomes transA/transB (last two swapped) and transBatchA/B (dim 0
//     moved in); the Transpose goes when nothing else reads it.
//   Scale: Mul/Div by a scalar constant before (any input) or after (the MatMul's only reader) → alpha.
#include <algorithm>
#include <numeric>

#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

struct TransposeFold {
    NodeId node = kNone;
    bool trans = false, transBatch = false;
};

/// GetTransposeNodeFromOutput: the Transpose producing `v` when its perm can be folded.
TransposeFold transposeOf(const Graph& g, ValueId v) {
    NodeId t = producer(g, v, "Transpose");
    if (t == kNone || producesGraphOutput(g, t)) return {};
    std::vector<int64_t> perm = g.node(t).attrInts("perm");
    if (perm.empty()) {
        auto s = shapeOf(g, g.node(t).inputs[0]);
        if (!s) return {};
        perm.resize(s->rank());
        std::iota(perm.rbegin(), perm.rend(), 0);
    }
    const size_t rank = perm.size();
    if (rank < 2) return {};
    const int64_t last = int64_t(rank) - 1;
    const size_t lastIndex = perm[rank - 1] == last ? rank - 1 : perm[rank - 2] == last ? rank - 2 : rank;
    if (lastIndex == rank) return {};
    if (rank >= 3) {
        if (perm[0] != 0 && perm[0] != 1) return {};
        for (size_t i = 0; i + 3 < rank; ++i)
            if (perm[i] + 1 != perm[i + 1]) return {};
    }
    return {t, lastIndex == rank - 2, rank >= 3 && perm[0] == 1};
}

bool fuseTranspose(Rewriter& rw, NodeId mmId) {
    const Graph& g = rw.graph();
    const Node& mm = g.node(mmId);
    const std::vector<DataType> types{DataType::Float, DataType::Float16, DataType::Double, DataType::BFloat16};
    if (!elemTypeIn(g, mm.inputs[0], types) || !elemTypeIn(g, mm.inputs[1], types)) return false;
    const bool fused = mm.opType == "FusedMatMul";
    TransposeFold left = !fused || mm.attrInt("transBatchA", 0) == 0 ? transposeOf(g, mm.inputs[0]) : TransposeFold{};
    TransposeFold right = !fused || mm.attrInt("transBatchB", 0) == 0 ? transposeOf(g, mm.inputs[1]) : TransposeFold{};
    if (left.transBatch || right.transBatch) {
        auto sl = shapeOf(g, mm.inputs[0]), sr = shapeOf(g, mm.inputs[1]);
        if (!sl || !sr || sl->rank() != sr->rank()) {
            const TransposeFold& dropped = left.transBatch ? left : right;
            refuse(rw, {mmId, dropped.node}, "MatmulTransposeFusion: " + q(g, dropped.node) + " not folded into " + q(g, mmId) +
                                                ": it moves a batch dim (transBatch) and the MatMul inputs' ranks differ or are unknown",
                      {g.node(dropped.node).outputs[0]});
            if (left.transBatch) left = {};
            if (right.transBatch) right = {};
        }
    }
    if (left.node == kNone && right.node == kNone) return false;
    ValueId l = mm.inputs[0], r = mm.inputs[1];
    std::vector<NodeId> group{mmId};
    auto take = [&](const TransposeFold& t, ValueId& side) {
        if (t.node == kNone) return;
        ValueId tOut = side;
        side = g.node(t.node).inputs[0];
        // The Transpose goes with the MatMul when this MatMul reads it and nothing else does.
        bool onlyHere = !g.value(tOut).isGraphOutput && match::subgraphReaders(g, tOut).empty();
        for (NodeId c : g.value(tOut).consumers) onlyHere = onlyHere && c == mmId;
        if (onlyHere && std::find(group.begin(), group.end(), t.node) == group.end()) group.push_back(t.node);
    };
    take(left, l);
    take(right, r);
    bool transA = left.trans, transB = right.trans, batchA = left.transBatch, batchB = right.transBatch;
    float alpha = 1.0f;
    if (fused) {
        transA ^= mm.attrInt("transA", 0) != 0;
        transB ^= mm.attrInt("transB", 0) != 0;
        batchA ^= mm.attrInt("transBatchA", 0) != 0;
        batchB ^= mm.attrInt("transBatchB", 0) != 0;
        alpha = mm.attrFloat("alpha", 1.0f);
    }
    useMicrosoftDomain(rw);
    std::string what = q(g, mmId);
    if (left.node != kNone) what += " + " + q(g, left.node);
    if (right.node != kNone && right.node != left.node) what += " + " + q(g, right.node);
    NodeId out = rw.replaceNodes(group, "FusedMatMul", {l, r}, {mm.outputs[0]},
                                 {Attribute::makeInt("transA", transA), Attribute::makeInt("transB", transB),
                                  Attribute::makeInt("transBatchA", batchA), Attribute::makeInt("transBatchB", batchB),
                                  Attribute::makeFloat("alpha", alpha)},
                                 "MatmulTransposeFusion: " + what, "MatMul_With_Transpose", kMSDomain);
    rw.applied({out}, "MatmulTransposeFusion: " + what + " fused into FusedMatMul (transA " + std::to_string(transA) + ", transB " +
                          std::to_string(transB) + ", transBatchA " + std::to_string(batchA) + ", transBatchB " + std::to_string(batchB) + ")");
    return true;
}

struct Scale {
    NodeId node = kNone;
    int scaleIndex = -1;  ///< the scale's input slot on the Mul/Div
    double value = 1;
};

/// GetScaleFromNode: a Div by, or Mul with, a constant with one element whose rank does not
/// exceed the other input's.
Scale scaleOf(const Graph& g, NodeId n) {
    const Node& node = g.node(n);
    if (node.inputs.size() != 2) return {};
    auto scalarFor = [&](int idx) -> std::optional<double> {
        const TensorPtr t = match::constantOf(g, node.inputs[size_t(idx)]);
        if (!t || t->elementCount() != 1) return std::nullopt;
        auto other = shapeOf(g, node.inputs[size_t(1 - idx)]);
        if (t->dims.size() > (other ? other->rank() : 0)) return std::nullopt;
        return constantScalar(g, node.inputs[size_t(idx)]);
    };
    if (isOp(g, n, "Div")) {
        if (auto d = scalarFor(1)) return {n, 1, 1.0 / *d};
        return {};
    }
    if (isOp(g, n, "Mul"))
        for (int i = 0; i < 2; ++i)
            if (auto m = scalarFor(i)) return {n, i, *m};
    return {};
}

bool fuseScale(Rewriter& rw, NodeId mmId) {
    const Graph& g = rw.graph();
    const Node& mm = g.node(mmId);
    if (!elemTypeIn(g, mm.inputs[0], {DataType::Float, DataType::Double}) || !elemTypeIn(g, mm.inputs[1], {DataType::Float, DataType::Double}))
        return false;
    std::vector<ValueId> inputs = mm.inputs;
    std::vector<NodeId> group{mmId};
    std::vector<NodeId> kept;
    double alpha = mm.opType == "FusedMatMul" ? mm.attrFloat("alpha", 1.0f) : 1.0;
    std::string what;
    for (size_t slot = 0; slot < 2; ++slot) {
        const NodeId p = g.value(mm.inputs[slot]).producer;
        if (p == kNone) continue;
        Scale s = scaleOf(g, p);
        if (s.node == kNone) continue;
        ValueId unscaled = g.node(p).inputs[size_t(1 - s.scaleIndex)];
        auto us = shapeOf(g, unscaled);
        if (!us || us->rank() == 0) continue;  // the scaled input must not itself be a scalar
        inputs[slot] = unscaled;
        alpha *= s.value;
        what += (what.empty() ? "" : ", ") + q(g, p);
        // The scale node goes only when the MatMul was its last reader.
        bool onlyHere = !producesGraphOutput(g, p);
        for (NodeId c : outputNodes(g, p)) onlyHere = onlyHere && c == mmId;
        if (onlyHere) group.push_back(p); else kept.push_back(p);
    }
    ValueId out = mm.outputs[0];
    const auto readers = outputNodes(g, mmId);
    if (readers.size() == 1 && !producesGraphOutput(g, mmId)) {
        Scale s = scaleOf(g, readers[0]);
        if (s.node != kNone && g.node(readers[0]).inputs[size_t(1 - s.scaleIndex)] == out) {
            alpha *= s.value;
            group.push_back(readers[0]);
            out = g.node(readers[0]).outputs[0];
            what += (what.empty() ? "" : ", ") + q(g, readers[0]);
        }
    }
    if (group.size() == 1 && kept.empty()) return false;
    std::vector<Attribute> attrs = mm.opType == "FusedMatMul" ? mm.attributes : std::vector<Attribute>{};
    attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [](const Attribute& a) { return a.name == "alpha"; }), attrs.end());
    attrs.push_back(Attribute::makeFloat("alpha", float(alpha)));
    useMicrosoftDomain(rw);
    const std::string name = q(g, mmId);
    NodeId fusedNode = rw.replaceNodes(group, "FusedMatMul", inputs, {out}, std::move(attrs), "MatMulScaleFusion: " + name + " with " + what,
                                       mm.name.empty() ? "MatMulScaleFusion" : mm.name + "/MatMulScaleFusion/", kMSDomain);
    std::string note;
    for (NodeId k : kept) note += "; " + q(g, k) + " stays: it is also " + readBy(g, k);
    rw.applied({fusedNode}, "MatMulScaleFusion: " + what + " folded into " + name + " as alpha " +
                                Attribute::makeFloat("alpha", float(alpha)).valueToString() + note);
    return true;
}

}  // namespace

std::vector<RewriteRule> matMulTransposeFusion() {
    return {{"MatmulTransposeFusion", {"MatMul"}, "", fuseTranspose}, {"MatmulTransposeFusion", {"FusedMatMul"}, kMSDomain, fuseTranspose}};
}

std::vector<RewriteRule> matMulScaleFusion() {
    return {{"MatMulScaleFusion", {"MatMul"}, "", fuseScale}, {"MatMulScaleFusion", {"FusedMatMul"}, kMSDomain, fuseScale}};
}

}  // namespace passlens::passes::ort
