// group-attention (level all): every variant of scaled dot-product attention (scale after Q·Kᵀ or
// on Q, additive mask or none, K transposed by a Transpose or already transposed) becomes one
// call of a model-local function Attention; a blocked one gets a missed remark naming the node.
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "passes/fusion/GroupFunctions.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

struct AttentionOptions {
    bool scaleOnQ = false;        ///< Mul(Q, 1/√d) before the MatMul instead of Div after it
    bool mask = true;             ///< additive mask, a graph input
    bool kPreTransposed = false;  ///< K arrives as Kᵀ: no Transpose node
    bool probsTapped = false;     ///< the probabilities are a graph output too
    bool notScores = false;       ///< the Softmax reads a Relu, not Q·Kᵀ
    int64_t opset = 17;
    bool threeD = false;          ///< [batch·heads, seq, d] as PyTorch's MultiheadAttention writes it
};

Model attention(const AttentionOptions& o) {
    GraphBuilder b("attention", o.opset);
    // 4-D [1, 2 heads, 4 tokens, 8], or 3-D [2 = batch·heads, 4 tokens, 8].
    auto dims = [&](std::vector<int64_t> d4) {
        if (o.threeD) d4.erase(d4.begin());
        return d4;
    };
    auto q = b.input("q", DataType::Float, dims({1, 2, 4, 8}));
    auto k = b.input("k", DataType::Float, o.kPreTransposed ? dims({1, 2, 8, 4}) : dims({1, 2, 4, 8}));
    auto v = b.input("v", DataType::Float, dims({1, 2, 4, 8}));
    ValueId mask = o.mask ? b.input("mask", DataType::Float, o.threeD ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{1, 1, 1, 4}) : kNone;
    const std::vector<int64_t> swapLast = o.threeD ? std::vector<int64_t>{0, 2, 1} : std::vector<int64_t>{0, 1, 3, 2};
    ValueId kt = o.kPreTransposed ? k : b.op("Transpose", {k}, {Attribute::makeInts("perm", swapLast)}, "kt");
    ValueId scores;
    if (o.notScores) {
        scores = b.op("Relu", {q}, {}, "relu");
    } else if (o.scaleOnQ) {
        scores = b.op("MatMul", {b.op("Mul", {q, b.scalar("inv_sqrt_d", 0.3536f)}, {}, "q_scale"), kt}, {}, "qk");
    } else {
        scores = b.op("Div", {b.op("MatMul", {q, kt}, {}, "qk"), b.scalar("sqrt_d", 2.828f)}, {}, "scale");
    }
    if (o.mask) scores = b.op("Add", {scores, mask}, {}, "mask_add");
    auto p = b.op("Softmax", {scores}, {Attribute::makeInt("axis", -1)}, "softmax");
    b.output(b.op("MatMul", {p, o.notScores ? b.input("v2", DataType::Float, dims({1, 2, 8, 8})) : v}, {}, "pv"));
    if (o.probsTapped) b.output(b.op("Neg", {p}, {}, "tap"));
    return b.finish();
}

size_t callsOf(const Model& m, const std::string& prefix) {
    size_t n = 0;
    for (NodeId id : m.graph.nodeOrder())
        n += m.graph.node(id).domain == kFusedFunctionDomain && m.graph.node(id).opType.rfind(prefix, 0) == 0;
    return n;
}

}  // namespace

TEST(GroupAttention, EveryVariantBecomesOneCall) {
    struct Case { AttentionOptions o; size_t nodes, arguments; };
    for (const Case& c : {Case{{}, 6, 4}, Case{{.scaleOnQ = true}, 6, 4}, Case{{.mask = false}, 5, 3},
                          Case{{.kPreTransposed = true}, 5, 4}, Case{{.scaleOnQ = true, .mask = false, .kPreTransposed = true}, 4, 3}}) {
        Model m = attention(c.o);
        auto run = test::runChecked(m, "group-attention", test::fusionCheckOptions(3));
        EXPECT_EQ(m.graph.nodeCount(), 1u);
        EXPECT_EQ(callsOf(m, "Attention"), 1u);
        ASSERT_EQ(m.functions.size(), 1u);
        EXPECT_EQ(m.functions[0].body->nodeCount(), c.nodes + 1);  // + a Constant node for the scale
        const std::string applied = remarkText(run.result, RemarkKind::Applied);
        EXPECT_NE(applied.find("attention at softmax: " + std::to_string(c.nodes) + " nodes ("), std::string::npos) << applied;
        EXPECT_NE(applied.find("with " + std::to_string(c.arguments) + " arguments"), std::string::npos) << applied;
    }
}

TEST(GroupAttention, ATappedIntermediateBlocksAndIsNamed) {
    Model m = attention({.probsTapped = true});
    auto run = test::runChecked(m, "group-attention", test::fusionCheckOptions(3));
    EXPECT_FALSE(run.result.changed);
    EXPECT_EQ(callsOf(m, "Attention"), 0u);
    EXPECT_NE(remarkText(run.result, RemarkKind::Missed)
                  .find("attention at softmax not grouped into a function: 'softmax_out' of softmax has 2 readers (pv, tap)"),
              std::string::npos)
        << remarkText(run.result, RemarkKind::Missed);
}

TEST(GroupAttention, SoftmaxOfSomethingElseNamesTheBlockingNode) {
    Model m = attention({.mask = false, .notScores = true});
    auto run = test::runChecked(m, "group-attention", test::fusionCheckOptions(3));
    EXPECT_FALSE(run.result.changed);
    EXPECT_NE(remarkText(run.result, RemarkKind::Missed)
                  .find("not grouped into a function: the scores reaching softmax come from relu (Relu), not a Q·Kᵀ MatMul"),
              std::string::npos)
        << remarkText(run.result, RemarkKind::Missed);
}

TEST(GroupAttention, LayersShareOneFunction) {
    // Two attentions with the same scale share one body; the second run changes nothing.
    GraphBuilder b("two_layers", 17);
    ValueId x = b.input("x", DataType::Float, {1, 2, 4, 8});
    for (int layer = 0; layer < 2; ++layer) {
        const std::string p = "l" + std::to_string(layer) + "_";
        auto kt = b.op("Transpose", {x}, {Attribute::makeInts("perm", {0, 1, 3, 2})}, p + "kt");
        auto s = b.op("Div", {b.op("MatMul", {x, kt}, {}, p + "qk"), b.scalar(p + "sqrt_d", 2.828f)}, {}, p + "scale");
        x = b.op("MatMul", {b.op("Softmax", {s}, {Attribute::makeInt("axis", -1)}, p + "softmax"), x}, {}, p + "pv");
    }
    b.output(x);
    Model m = b.finish();
    test::runChecked(m, "group-attention", test::fusionCheckOptions(3));
    EXPECT_EQ(callsOf(m, "Attention"), 2u);
    EXPECT_EQ(m.functions.size(), 1u);
}

TEST(GroupAttention, AtOpset23EachVariantWithKTransposedIsOneAttentionNode) {
    // Scale after Q·Kᵀ (Div by 2.828) or on Q (Mul by 0.3536), with or without a mask, 4-D or 3-D:
    // one standard Attention node, the scale as its attribute, outputs equal in the interpreter.
    struct Case { AttentionOptions o; float scale; size_t inputs; };
    for (const Case& c : {Case{{.opset = 23}, 1.f / 2.828f, 4}, Case{{.scaleOnQ = true, .opset = 23}, 0.3536f, 4},
                          Case{{.mask = false, .opset = 23}, 1.f / 2.828f, 3},
                          Case{{.opset = 23, .threeD = true}, 1.f / 2.828f, 4}}) {
        Model m = attention(c.o);
        auto run = test::runChecked(m, "group-attention", test::fusionCheckOptions(5));
        ASSERT_EQ(m.graph.nodeCount(), 1u);
        const Node& n = m.graph.node(m.graph.nodeOrder().front());
        EXPECT_EQ(n.opType, "Attention");
        EXPECT_TRUE(n.domain.empty());
        EXPECT_NEAR(n.attrFloat("scale", 0), c.scale, 1e-6);
        EXPECT_EQ(n.inputs.size(), c.inputs);
        EXPECT_EQ(n.attrInt("q_num_heads", 0), c.o.threeD ? 1 : 0);
        EXPECT_TRUE(m.functions.empty());
        EXPECT_TRUE(m.graph.initializerOrder().empty()) << "the scale constant stays behind";
        EXPECT_NE(remarkText(run.result, RemarkKind::Applied).find("fused into Attention"), std::string::npos);
    }
}

TEST(GroupAttention, AtOpset23APreTransposedKSaysWhyAndBecomesAFunction) {
    Model m = attention({.kPreTransposed = true, .opset = 23});
    auto run = test::runChecked(m, "group-attention", test::fusionCheckOptions(5));
    EXPECT_EQ(callsOf(m, "Attention"), 1u);
    EXPECT_NE(remarkText(run.result, RemarkKind::Missed)
                  .find("is not the standard Attention op: K arrives already transposed"),
              std::string::npos)
        << remarkText(run.result, RemarkKind::Missed);
}

TEST(GroupAttention, BelowOpset23ItStaysAFunction) {
    Model m = attention({.opset = 20});
    test::runChecked(m, "group-attention", test::fusionCheckOptions(5));
    EXPECT_EQ(callsOf(m, "Attention"), 1u);
    for (NodeId id : m.graph.nodeOrder()) EXPECT_NE(m.graph.node(id).opType == "Attention" && m.graph.node(id).domain.empty(), true);
}
