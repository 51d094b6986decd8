// ONNX Runtime's MatMulAddFusion (Level1, matmul_add_fusion.cc): Add(MatMul(A, B), C) → Gemm(A, B, C).
// B must be 2-D; an A of another rank is flattened around the Gemm with two Reshapes of constant
// shapes (Reshape A to [M, K], Gemm, Reshape back to A's leading dims + [N]), so A's shape must be
// fully static. C must be [N] (or [1, N], [M, 1], [M, N] when no Reshape is needed).
#include "ir/IntsText.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

bool fuse(Rewriter& rw, NodeId mmId) {
    const Graph& g = rw.graph();
    const Node& mm = g.node(mmId);
    // Only a MatMul read by exactly one Add is a candidate; any other reader set is silent
    // unless an Add is among the readers (then the count is the reason).
    const auto readers = outputNodes(g, mmId);
    NodeId addId = readers.size() == 1 && isOp(g, readers[0], "Add") ? readers[0] : kNone;
    if (addId == kNone) {
        for (NodeId r : readers)
            if (isOp(g, r, "Add"))
                refuse(rw, {mmId, r}, "MatMulAddFusion: not applied at " + q(g, mmId) + ": its output " + qv(g, mm.outputs[0]) +
                                         " is " + readBy(g, mmId) + ", ONNX Runtime needs exactly one (the Add)",
                          {mm.outputs[0]});
        return false;
    }
    auto refuse = [&](const std::string& why, std::vector<ValueId> edges = {}) {
        ort::refuse(rw, {mmId, addId}, "MatMulAddFusion: not applied at " + q(g, mmId) + " + " + q(g, addId) + ": " + why, std::move(edges));
        return false;
    };
    if (producesGraphOutput(g, mmId)) return refuse("the MatMul output is a graph output", {mm.outputs[0]});
    const Node& add = g.node(addId);
    ValueId a = mm.inputs[0], b = mm.inputs[1];
    if (g.value(a).type.elemType != g.value(add.inputs[0]).type.elemType)
        return refuse("A and the Add's first input differ in type");
    if (!elemTypeIn(g, a, {DataType::Float, DataType::Float16, DataType::BFloat16}))
        return refuse("Gemm takes float, float16 or bfloat16, " + qv(g, a) + " is not");
    auto sa = shapeOf(g, a), sb = shapeOf(g, b);
    if (!sa || !sb) return refuse("the shape of " + qv(g, !sa ? a : b) + " is unknown", {!sa ? a : b});
    if (sb->rank() != 2) return refuse("B " + qv(g, b) + " has rank " + std::to_string(sb->rank()) + ", Gemm needs 2", {b});
    const bool needReshape = sa->rank() != 2;
    int64_t m = 0, k = 0, n = 0;
    std::vector<int64_t> aDims;
    if (needReshape) {
        if (!sa->isStatic())
            return refuse("A " + qv(g, a) + " has shape " + sa->toString() + ": with rank " + std::to_string(sa->rank()) +
                              " the Reshapes around a Gemm need every dim concrete", {a});
        if (!sb->isStatic()) return refuse("B " + qv(g, b) + "'s dims are not concrete", {b});
        aDims = sa->staticDims();
        m = 1;
        for (size_t i = 0; i + 1 < aDims.size(); ++i) m *= aDims[i];
        k = *sb->dims[0].value;
        n = *sb->dims[1].value;
    }
    const size_t biasSlot = add.inputs[0] == mm.outputs[0] ? 1 : 0;
    ValueId c = add.inputs[biasSlot];
    auto sc = shapeOf(g, c);
    if (!sc) return refuse("the shape of the addend " + qv(g, c) + " is unknown", {c});
    const Dim& dimN = sb->dims[1];
    auto one = [](const Dim& d) { return d.value == 1; };
    const bool valid = (sc->rank() == 1 && sc->dims[0] == dimN) ||
                       (!needReshape && sc->rank() == 2 && one(sc->dims[0]) && sc->dims[1] == dimN) ||
                       (!needReshape && sc->rank() == 2 && sc->dims[0] == sa->dims[0] && (one(sc->dims[1]) || sc->dims[1] == dimN));
    if (!valid)
        return refuse("the addend " + qv(g, c) + " has shape " + sc->toString() + ", Gemm's C must be [N]" +
                          (needReshape ? "" : ", [1, N], [M, 1] or [M, N]"), {c});
    const std::string pair = q(g, mmId) + " + " + q(g, addId);
    const std::string reason = "MatMulAddFusion: " + pair + " → Gemm" + (needReshape ? " between Reshapes" : "");
    const std::string hint = mm.name.empty() ? "MatMulAddFusion" : mm.name + "/MatMulAddFusion";
    ValueId out = add.outputs[0];
    if (!needReshape) {
        NodeId gemm = rw.replaceNodes({mmId, addId}, "Gemm", {a, b, c}, {out}, {}, reason, hint);
        rw.applied({gemm}, "MatMulAddFusion: " + pair + " fused into Gemm");
        return true;
    }
    const DataType t = g.value(a).type.elemType;
    ValueId gemmOut = rw.newValue("gemm_output_reshape_arg", TypeInfo::tensor(t, Shape{{Dim::of(m), Dim::of(n)}}));
    std::vector<int64_t> outDims = aDims;
    outDims.back() = n;
    ValueId outShape = rw.newInitializer("gemm_output_shape", makeTensorOf(DataType::Int64, {int64_t(outDims.size())}, outDims));
    NodeId last = rw.replaceNodes({mmId, addId}, "Reshape", {gemmOut, outShape}, {out}, {}, reason, "gemm_output_reshape");
    ValueId gemmIn = rw.newValue("gemm_input_reshape_arg", TypeInfo::tensor(t, Shape{{Dim::of(m), Dim::of(k)}}));
    ValueId inShape = rw.newInitializer("gemm_input_shape", makeTensorOf(DataType::Int64, {2}, std::vector<int64_t>{m, k}));
    NodeId gemm = rw.addNode("Gemm", {gemmIn, b, c}, {gemmOut}, {}, {last}, reason, hint);
    rw.addNode("Reshape", {a, inShape}, {gemmIn}, {}, {last}, reason, "gemm_input_reshape");
    rw.applied({gemm}, "MatMulAddFusion: " + pair + " fused into Gemm, A reshaped " + intsText(aDims) + " → " +
                           intsText({m, k}) + " and the result back to " + intsText(outDims));
    return true;
}

}  // namespace

std::vector<RewriteRule> matMulAddFusion() {
    return {{"MatMulAddFusion", {"MatMul"}, "", fuse}};
}

}  // namespace passlens::passes::ort
