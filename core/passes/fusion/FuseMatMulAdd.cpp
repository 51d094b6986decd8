// MatMul + Add → Gemm, with Transposes of the operands folded into transA/transB:
//   Add(MatMul(A, B), C) → Gemm(A, B, C)          A, B 2-D; C a constant broadcastable to [M, N]
//   MatMul(Transpose(A), B) → transA=1, MatMul(A, Transpose(B)) → transB=1 (2-D transposes)
// The MatMul output must be read only by the Add (the product is not kept).
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"

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
    if (rankOf(g, g.node(t).inputs[0]) != size_t(2) || (!perm.empty() && perm != std::vector<int64_t>{1, 0})) return kNone;
    if (g.value(v).isGraphOutput || g.value(v).consumers.size() != 1 || g.value(v).consumers[0] != reader) return kNone;
    return t;
}

}  // namespace

void FuseMatMulAdd::runImpl(PassContext& ctx) const {
    const int64_t opset = defaultOpset(ctx.model());
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        rw.setRule("matmul-add-gemm");
        for (NodeId mmId : std::vector<NodeId>(g.nodeOrder())) {
            if (!g.hasNode(mmId) || !isOp(g.node(mmId), "MatMul")) continue;
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
            auto ra = rankOf(g, a), rb = rankOf(g, b);
            if (ra != size_t(2) || rb != size_t(2)) {
                refuse("Gemm needs 2-D operands, " + mm.displayName() + " multiplies ranks " + (ra ? std::to_string(*ra) : "?") +
                       " and " + (rb ? std::to_string(*rb) : "?"));
                continue;
            }
            if (g.value(y).type.elemType != DataType::Float) { refuse("the product is not float32"); continue; }
            const Tensor* bias = constantOf(g, c);
            auto yDims = staticDims(g, y);
            if (!bias) { refuse("the addend '" + g.value(c).name + "' is not a constant", {c}); continue; }
            if (!yDims || !broadcastsTo(bias->dims, (*yDims)[0], (*yDims)[1])) {
                refuse("the addend '" + g.value(c).name + "' of shape " + Attribute::makeInts("", bias->dims).valueToString() +
                           " does not broadcast to the product's shape" + (yDims ? " " + Attribute::makeInts("", *yDims).valueToString() : ""),
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

}  // namespace passlens::passes
