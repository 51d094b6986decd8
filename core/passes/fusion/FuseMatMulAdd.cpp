// MatMul + Add → Gemm, with Transposes of the operands folded into transA/transB:
//   Add(MatMul(A, B), C) → Gemm(A, B, C)          A, B 2-D; C a constant broadcastable to [M, N]
//   MatMul(Transpose(A), B) → transA=1, MatMul(A, Transpose(B)) → transB=1 (2-D transposes)
// The MatMul output must be read only by the Add (the product is not kept). A Transpose of a
// constant operand of any MatMul is folded into a pre-transposed initializer. A MatMul with a
// rank >= 3 A is refused with a remark saying what flattening it around a Gemm would take.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "passes/fusion/FusionPasses.h"
#include "passes/ShapeChain.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/layout/TransposeUtil.h"

namespace passlens::passes {

using namespace passlens::ir;
using namespace passlens::passes::pattern;

namespace {

/// Unidirectional broadcast of `c` to [m, n] as Gemm's C allows.
bool broadcastsTo(const std::vector<int64_t>& c, int64_t m, int64_t n) {
    if (c.size() > 2) return false;
    std::vector<int64_t> full(2 - c.size(), 1);
    full.insert(full.end(), c.begin(), c.end());
    return (full[0] == 1 || full[0] == m) && (full[1] == 1 || full[1] == n);
}

/// A 2-D Transpose (perm [1, 0] or default) producing `v` and read only by `reader`.
NodeId foldableTranspose(const Graph& g, ValueId v, NodeId reader) {
    NodeId t = producerOf(g, v, "Transpose");
    if (t == kNone) return kNone;
    auto perm = g.node(t).attrInts("perm");
    if (g.value(g.node(t).inputs[0]).rank() != size_t(2) || (!perm.empty() && perm != std::vector<int64_t>{1, 0})) return kNone;
    if (readOutside(g, v, {reader})) return kNone;
    return t;
}

/// `t` transposed by `perm` (element size agnostic: bytes are moved).
TensorPtr transposed(const Tensor& t, const std::vector<int64_t>& perm) {
    const size_t rank = t.dims.size(), elem = elementSize(t.dtype);
    std::vector<int64_t> outDims(rank), inStrides(rank, 1);
    for (size_t i = rank; i-- > 1;) inStrides[i - 1] = inStrides[i] * t.dims[i];
    for (size_t i = 0; i < rank; ++i) outDims[i] = t.dims[size_t(perm[i])];
    std::string bytes(t.byteSize(), '\0');
    std::vector<int64_t> idx(rank, 0);
    for (int64_t o = 0; o < t.elementCount(); ++o) {
        int64_t src = 0;
        for (size_t i = 0; i < rank; ++i) src += idx[i] * inStrides[size_t(perm[i])];
        std::memcpy(bytes.data() + size_t(o) * elem, reinterpret_cast<const char*>(t.data.data()) + size_t(src) * elem, elem);
        for (size_t i = rank; i-- > 0;) {
            if (++idx[i] < outDims[i]) break;
            idx[i] = 0;
        }
    }
    return makeTensor(t.dtype, outDims, bytes.data(), bytes.size());
}

/// MatMul(A, Transpose(B)) with a constant B read only there: B is stored pre-transposed.
bool foldConstantTranspose(Rewriter& rw, NodeId mmId) {
    const Graph& g = rw.graph();
    for (size_t side = 0; side < 2; ++side) {
        ValueId v = g.node(mmId).inputs[side];
        NodeId t = producerOf(g, v, "Transpose");
        if (t == kNone || readerCount(g, v) != 1) continue;
        const TensorPtr c = constantOf(g, g.node(t).inputs[0]);
        if (!c || elementSize(c->dtype) == 0 || c->dims.empty()) continue;
        auto perm = g.node(t).attrInts("perm");
        if (perm.empty())
            for (size_t i = c->dims.size(); i-- > 0;) perm.push_back(int64_t(i));
        if (perm.size() != c->dims.size() || !layoututil::isPermutation(perm)) continue;
        ValueId old = g.node(t).inputs[0];
        ValueId pre = rw.newInitializer(g.value(old).name + "_transposed", transposed(*c, perm));
        const std::string name = g.node(t).displayName();
        rw.setInput(mmId, side, pre, name + " of a constant folded: " + g.node(mmId).displayName() + " reads the weights pre-transposed");
        rw.eraseNode(t, name + " is no longer read");
        rw.applied({mmId}, name + " folded into " + g.node(mmId).displayName() + "'s constant operand (pre-transposed)");
        removeUnreadConstants(rw, {old}, "pre-transposing");
        return true;
    }
    return false;
}

/// "[2, 4, 8]", "[batch, ?, 8]": a shape as the remarks print it.
std::string shapeText(const Shape& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.dims.size(); ++i) {
        const Dim& d = s.dims[i];
        out += (i ? ", " : "") + (d.value ? std::to_string(*d.value) : d.param.empty() ? "?" : d.param);
    }
    return out + "]";
}

/// Why a MatMul with a rank ≥ 3 A is left alone, and what flattening it around a Gemm would take
/// (as ONNX Runtime does: Reshape A [..., K] → [P, K], Gemm, Reshape back to [..., M]). The
/// rewrite is never done: it costs 3 nodes for 2 with static leading dims (Shape, Slice and Concat
/// more with dynamic ones), and a MatMul with a 2-D B already is one GEMM over the flattened rows
/// in ONNX Runtime's CPU kernel; only the separate bias pass over the output would be saved.
std::string flatteningNote(const Graph& g, ValueId a, ValueId b, ValueId c, std::optional<size_t> ra, std::optional<size_t> rb) {
    if (!ra && rb == size_t(2)) return "; A's rank is unknown, so whether a Reshape could flatten it to 2-D is undecided (pinning its symbolic dims may tell)";
    if (!ra || !rb) return "";
    if (*rb != 2 || *ra < 3) return *ra >= 2 && *rb >= 3 ? "; B is batched, no single Gemm computes it" : "";
    const TensorPtr w = constantOf(g, b);
    if (!w || w->dims.size() != 2) return "; flattening A to 2-D would need B to be a constant 2-D initializer";
    const int64_t m = w->dims[1];
    const TensorPtr bias = constantOf(g, c);
    std::vector<int64_t> biasDims = bias ? bias->dims : std::vector<int64_t>{};
    while (!biasDims.empty() && biasDims.front() == 1 && biasDims.size() > 1) biasDims.erase(biasDims.begin());
    if (!bias || biasDims.size() > 1 || (biasDims.size() == 1 && biasDims[0] != 1 && biasDims[0] != m))
        return "; flattening A to 2-D would need a constant addend broadcastable to [" + std::to_string(m) + "]";
    const Shape& sa = *g.value(a).type.shape;
    Shape leading{std::vector<Dim>(sa.dims.begin(), sa.dims.end() - 1)};
    if (!leading.isStatic())
        return "; flattening would need Shape, Slice and Concat to restore A's leading dims " + shapeText(leading) +
               " around Reshape, Gemm, Reshape (6 nodes for 2), so it is not done";
    Shape flatA{{Dim::of(1), sa.dims.back()}}, out{leading.dims};
    for (const Dim& d : leading.dims)
        if (int64_t rows; flatA.dims[0].value && !__builtin_mul_overflow(*flatA.dims[0].value, *d.value, &rows))
            flatA.dims[0].value = rows;
        else
            flatA.dims[0] = Dim::symbol("P");
    out.dims.push_back(Dim::of(m));
    return "; flattening would take Reshape A " + shapeText(sa) + " to " + shapeText(flatA) + ", Gemm, Reshape back to " +
           shapeText(out) + " (3 nodes for 2, the product is one BLAS call already), so it is not done";
}

}  // namespace

void FuseMatMulAdd::runImpl(PassContext& ctx) const {
    const int64_t opset = defaultOpset(ctx.model());
    ctx.forEachGraph([&](Rewriter& rw) {
        const Graph& g = rw.graph();
        rw.setRule("matmul-add-gemm");
        for (NodeId mmId : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(mmId) || !isOp(g.node(mmId), "MatMul")) continue;
            foldConstantTranspose(rw, mmId);
            const Node& mm = g.node(mmId);
            ValueId y = mm.outputs[0];
            NodeId addId = kNone;
            for (NodeId c : g.value(y).consumers)
                if (isOp(g.node(c), "Add") && g.node(c).inputs.size() == 2) addId = c;
            if (addId == kNone) continue;
            const std::string pair = mm.displayName() + " + " + g.node(addId).displayName();
            ValueId a = mm.inputs[0], b = mm.inputs[1], c = otherInput(g.node(addId), y);
            auto refuse = [&](const std::string& why, std::vector<ValueId> blocking = {}) {
                rw.missed({mmId, addId}, pair + " not fused into Gemm: " + why, std::move(blocking));
            };
            if (opset < 7) { refuse("Gemm with broadcasting needs opset 7"); continue; }
            if (readerCount(g, y) != 1) {
                refuse(mm.displayName() + "'s output has " + std::to_string(readerCount(g, y)) + " readers (" + readersOf(g, y) + ")", {y});
                continue;
            }
            auto ra = g.value(a).rank(), rb = g.value(b).rank();
            if (ra != size_t(2) || rb != size_t(2)) {
                refuse("Gemm needs 2-D operands, " + mm.displayName() + " multiplies ranks " + (ra ? std::to_string(*ra) : "?") +
                       " and " + (rb ? std::to_string(*rb) : "?") + flatteningNote(g, a, b, c, ra, rb));
                continue;
            }
            if (g.value(y).type.elemType != DataType::Float) { refuse("the product is not float32"); continue; }
            const TensorPtr bias = constantOf(g, c);
            // A symbolic dim (-1 here) only takes a bias dim of 1: a bias [N] fits M rows however many.
            std::optional<std::vector<int64_t>> yDims;
            if (auto d0 = dimOf(g, y, 0), d1 = dimOf(g, y, 1); d0 && d1)
                yDims = std::vector<int64_t>{d0->value.value_or(-1), d1->value.value_or(-1)};
            if (!bias) { refuse("the addend '" + g.value(c).name + "' is not a constant", {c}); continue; }
            if (!yDims || !broadcastsTo(bias->dims, (*yDims)[0], (*yDims)[1])) {
                refuse("the addend '" + g.value(c).name + "' of shape " + Attribute::makeInts("", bias->dims).valueToString() +
                           " does not broadcast to the product's shape" + (yDims ? " " + g.value(y).type.shape->toString() : ""),
                       {c});
                continue;
            }
            std::vector<NodeId> group{mmId, addId};
            std::vector<Attribute> attrs;
            std::string folded;
            if (NodeId ta = foldableTranspose(g, a, mmId); ta != kNone) {
                group.push_back(ta);
                a = g.node(ta).inputs[0];
                attrs.push_back(Attribute::makeInt("transA", 1));
                folded += ", Transpose of A as transA";
            }
            if (NodeId tb = foldableTranspose(g, b, mmId); tb != kNone) {
                group.push_back(tb);
                b = g.node(tb).inputs[0];
                attrs.push_back(Attribute::makeInt("transB", 1));
                folded += ", Transpose of B as transB";
            }
            const std::string name = mm.displayName();
            NodeId gemm = rw.replaceNodes(group, "Gemm", {a, b, c}, {g.node(addId).outputs[0]}, std::move(attrs),
                                          pair + ": Add of a constant after a 2-D MatMul is Gemm's C" + folded, name + ".gemm");
            rw.applied({gemm}, pair + " fused into Gemm" + folded);
        }
    });
}

std::unique_ptr<Pass> makeFuseMatMulAddPass() { return std::make_unique<FuseMatMulAdd>(); }

}  // namespace passlens::passes
