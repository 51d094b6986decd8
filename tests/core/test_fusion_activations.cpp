// PReLU, GlobalAveragePool and constant-chain fusions (positive, negative, traps, equivalence);
// GELU and SiLU forms found and reported with the opset they need; attention marked, not rewritten.
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

PassResult runAndCompare(Model& m, const std::string& pass) {
    return test::runChecked(m, pass, test::fusionCheckOptions(13)).result;
}

Model preluForm(bool subForm, std::vector<int64_t> slopeDims, bool tap = false) {
    GraphBuilder b("prelu", 13);
    auto x = b.input("x", DataType::Float, {1, 4, 3, 3});
    auto pos = b.op("Relu", {x}, {}, "relu_pos");
    auto negRelu = b.op("Relu", {b.op("Neg", {x}, {}, "neg")}, {}, "relu_neg");
    auto scaled = b.op("Mul", {b.constant("alpha", randomFloats(slopeDims, 5, 0.05f, 0.3f)), negRelu}, {}, "scale");
    auto y = subForm ? b.op("Sub", {pos, scaled}, {}, "combine") : b.op("Add", {pos, scaled}, {}, "combine");
    b.output(b.op("Sigmoid", {y}, {}, "out"));
    if (tap) b.output(b.op("Exp", {negRelu}, {}, "tap"));
    return b.finish();
}

Model spatialMeans(std::vector<int64_t> first, std::vector<int64_t> second, int64_t keepdims = 1) {
    GraphBuilder b("gap", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    std::vector<Attribute> k;
    if (keepdims != 1) k.push_back(Attribute::makeInt("keepdims", keepdims));
    auto attrs = [&](std::vector<int64_t> axes) {
        auto a = k;
        a.push_back(Attribute::makeInts("axes", std::move(axes)));
        return a;
    };
    auto y = b.op("ReduceMean", {x}, attrs(first), "mean_a");
    if (!second.empty()) y = b.op("ReduceMean", {y}, attrs(second), "mean_b");
    b.output(b.op("Relu", {y}, {}, "relu"));
    return b.finish();
}

}  // namespace

TEST(FusionPRelu, ReluFormsBecomePRelu) {
    for (bool sub : {true, false}) {
        for (std::vector<int64_t> dims : {std::vector<int64_t>{4, 1, 1}, {1}}) {
            Model m = preluForm(sub, dims);
            PassResult r = runAndCompare(m, "fuse-prelu");
            EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"PRelu", 1}, {"Sigmoid", 1}})) << sub;
            EXPECT_NE(remarkText(r, RemarkKind::Applied).find("PReLU form at combine: 5 nodes fused into PRelu"), std::string::npos);
        }
    }
}

TEST(FusionPRelu, SlopeThatWidensXAndSecondReaderAreRefused) {
    Model m = preluForm(true, {2, 1, 1, 1, 1});
    PassResult r = runAndCompare(m, "fuse-prelu");
    EXPECT_EQ(opCounts(m.graph)["PRelu"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("the slope of shape [2, 1, 1, 1, 1] does not broadcast to x"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    Model t = preluForm(true, {4, 1, 1}, true);
    PassResult rt = runAndCompare(t, "fuse-prelu");
    EXPECT_EQ(opCounts(t.graph)["PRelu"], 0);
    EXPECT_NE(remarkText(rt, RemarkKind::Missed).find("'relu_neg_out' has 2 readers (scale, tap)"), std::string::npos)
        << remarkText(rt, RemarkKind::Missed);
}

TEST(FusionGlobalPool, SpatialMeansBecomeGlobalAveragePool) {
    for (auto [a, b] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{{{3}, {2}}, {{-1}, {-2}}, {{2, 3}, {}}}) {
        Model m = spatialMeans(a, b);
        PassResult r = runAndCompare(m, "fuse-global-pool");
        EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"GlobalAveragePool", 1}, {"Relu", 1}}));
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("fused into GlobalAveragePool"), std::string::npos);
    }
}

TEST(FusionGlobalPool, KeepdimsZeroAndChannelAxisAreRefused) {
    Model m = spatialMeans({3}, {2}, 0);
    PassResult r = runAndCompare(m, "fuse-global-pool");
    EXPECT_EQ(opCounts(m.graph)["ReduceMean"], 2);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("mean over the spatial axes at mean_a not fused: keepdims=0"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    Model c = spatialMeans({1, 2, 3}, {});
    PassResult rc = runAndCompare(c, "fuse-global-pool");
    EXPECT_EQ(opCounts(c.graph)["ReduceMean"], 1);
    EXPECT_FALSE(rc.changed);
}

TEST(FusionConstantChains, ScalarChainsFold) {
    // One step scales by a power of two, so the chain rounds once (exactness: test_algebraic_float_exact.cpp).
    struct Case { std::string a, b, expect; };
    for (const Case& c : std::vector<Case>{{"Mul", "Mul", "Mul"}, {"Mul", "Div", "Mul"}, {"Div", "Mul", "Div"}, {"Div", "Div", "Div"}}) {
        Model m = test::scalarChain(c.a, 1.5f, c.b, 0.5f, {2, 3});
        PassResult r = runAndCompare(m, "fold-constant-chains");
        EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{c.expect, 1}})) << c.a << c.b;
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("first + second folded into one " + c.expect), std::string::npos);
        EXPECT_EQ(m.graph.initializerOrder().size(), 1u);
    }
    // Additive chains round twice where one Add would round once: they stay.
    for (const Case& c : std::vector<Case>{{"Add", "Add", ""}, {"Add", "Sub", ""}, {"Sub", "Add", ""}, {"Sub", "Sub", ""}}) {
        Model m = test::scalarChain(c.a, 1.5f, c.b, 0.75f, {2, 3});
        PassResult r = runAndCompare(m, "fold-constant-chains");
        EXPECT_EQ(m.graph.nodeCount(), 2u) << c.a << c.b;
        EXPECT_NE(remarkText(r, RemarkKind::Missed).find("first + second not folded: float32 addition is not associative"), std::string::npos);
    }
}

TEST(FusionConstantChains, MixedFamiliesVectorsAndSecondReadersStay) {
    GraphBuilder b("chain", 13);
    auto x = b.input("x", DataType::Float, {2, 3});
    auto y = b.op("Mul", {x, b.scalar("k1", 2.f)}, {}, "mul");
    auto z = b.op("Add", {y, b.scalar("k2", 1.f)}, {}, "add");             // Mul then Add: not one op
    auto w = b.op("Mul", {z, b.constant("v", randomFloats({3}, 1))}, {}, "mulv");
    auto u = b.op("Mul", {w, b.scalar("k3", 3.f)}, {}, "mul3");            // a vector coefficient before it
    b.output(u);
    b.output(b.op("Neg", {b.op("Mul", {b.op("Mul", {x, b.scalar("k4", 2.f)}, {}, "m4"), b.scalar("k5", 2.f)}, {}, "m5")}, {}, "n"));
    b.output(b.op("Mul", {x, b.scalar("k6", 2.f)}, {}, "m6"));
    Model m = b.finish();
    // m4's product also goes nowhere else, so m4·m5 folds; the rest stays.
    PassResult r = runAndCompare(m, "fold-constant-chains");
    EXPECT_EQ(m.graph.nodeCount(), 7u);
    EXPECT_FALSE(m.graph.findNode("m5").has_value());
    EXPECT_TRUE(m.graph.findNode("mul3").has_value());
}

/// One GELU in erf form (output 0) and one in tanh form (output 1); `tapErf` adds a second
/// reader of the erf form's intermediate 1 + erf(·).
Model geluForms(int64_t opset, bool tapErf = false) {
    GraphBuilder b("gelu", opset);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto erf = b.op("Erf", {b.op("Div", {x, b.scalar("sqrt2", 1.4142135f)}, {}, "div")}, {}, "erf");
    auto add1 = b.op("Add", {erf, b.scalar("one", 1.f)}, {}, "add1");
    auto g1 = b.op("Mul", {b.op("Mul", {x, add1}, {}, "mulx"), b.scalar("half", 0.5f)}, {}, "half_mul");
    b.output(g1);
    auto cube = b.op("Mul", {b.op("Pow", {x, b.scalar("three", 3.f)}, {}, "pow"), b.scalar("c", 0.044715f)}, {}, "cube");
    auto inner = b.op("Mul", {b.op("Add", {x, cube}, {}, "addc"), b.scalar("s", 0.7978846f)}, {}, "scale");
    auto th = b.op("Tanh", {inner}, {}, "tanh");
    auto halfX = b.op("Mul", {x, b.scalar("half2", 0.5f)}, {}, "halfx");
    b.output(b.op("Mul", {halfX, b.op("Add", {th, b.scalar("one2", 1.f)}, {}, "add2")}, {}, "g2"));
    if (tapErf) b.output(b.op("Exp", {add1}, {}, "tap"));
    return b.finish();
}

TEST(FusionGelu, ErfAndTanhFormsBelowOpset20AreReportedWithTheOpsetTheyNeed) {
    Model m = geluForms(17);
    PassResult r = runAndCompare(m, "fuse-gelu");
    EXPECT_FALSE(r.changed);
    const std::string missed = remarkText(r, RemarkKind::Missed);
    EXPECT_NE(missed.find("GELU (erf form) at erf: Gelu needs opset 20, the model imports opset 17"), std::string::npos) << missed;
    EXPECT_NE(missed.find("GELU (tanh form) at tanh: Gelu needs opset 20"), std::string::npos) << missed;
    // An Erf that is not x/√2 is no GELU.
    GraphBuilder nb("erf", 17);
    auto nx = nb.input("x", DataType::Float, {2, 8});
    nb.output(nb.op("Erf", {nx}, {}, "erf"));
    Model n = nb.finish();
    EXPECT_TRUE(runAndCompare(n, "fuse-gelu").remarks.empty());
}

TEST(FusionGelu, AtOpset20EachFormBecomesOneGeluNode) {
    Model m = geluForms(20);
    PassResult r = runAndCompare(m, "fuse-gelu");  // outputs compared in the interpreter
    EXPECT_TRUE(r.changed);
    auto counts = opCounts(m.graph);
    EXPECT_EQ(counts["Gelu"], 2);
    EXPECT_EQ(counts["Erf"] + counts["Tanh"] + counts["Mul"] + counts["Add"] + counts["Pow"] + counts["Div"], 0);
    EXPECT_EQ(m.graph.nodeCount(), 2u);
    EXPECT_TRUE(m.graph.initializerOrder().empty()) << "the GELU constants stay behind";
    int tanhForms = 0;
    for (NodeId n : m.graph.nodeOrder()) tanhForms += m.graph.node(n).attrString("approximate", "none") == "tanh";
    EXPECT_EQ(tanhForms, 1);
    EXPECT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    // A second run finds nothing left to fuse.
    EXPECT_FALSE(runAndCompare(m, "fuse-gelu").changed);
}

TEST(FusionGelu, AnIntermediateWithASecondReaderKeepsItsForm) {
    Model m = geluForms(20, /*tapErf=*/true);
    PassResult r = runAndCompare(m, "fuse-gelu");
    EXPECT_EQ(opCounts(m.graph)["Gelu"], 1);  // the tanh form still fuses
    const std::string missed = remarkText(r, RemarkKind::Missed);
    EXPECT_NE(missed.find("GELU (erf form) at erf: intermediate 'add1_out' is also read by"), std::string::npos) << missed;
}

TEST(FusionSilu, SigmoidFormsAreReported) {
    GraphBuilder b("silu", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    b.output(b.op("Mul", {x, b.op("Sigmoid", {x}, {}, "sig")}, {}, "silu"));
    b.output(b.op("Mul", {b.op("Sigmoid", {b.op("Mul", {x, b.scalar("k", 1.702f)}, {}, "kx")}, {}, "sig2"), x}, {}, "quick"));
    b.output(b.op("Mul", {b.input("y", DataType::Float, {2, 8}), b.op("Sigmoid", {x}, {}, "sig3")}, {}, "gate"));
    Model m = b.finish();
    PassResult r = runAndCompare(m, "fuse-silu");
    const std::string missed = remarkText(r, RemarkKind::Missed);
    EXPECT_NE(missed.find("SiLU x·Sigmoid(x) at silu: no standard ONNX op"), std::string::npos) << missed;
    EXPECT_NE(missed.find("QuickGELU x·Sigmoid(1.702·x) at quick"), std::string::npos) << missed;
    EXPECT_EQ(missed.find("at gate"), std::string::npos);  // y·Sigmoid(x) is a gate, not SiLU
}

TEST(DetectAttention, MarksScaledMaskedAttentionWithoutRewriting) {
    GraphBuilder b("attention", 17);
    auto q = b.input("q", DataType::Float, {1, 2, 4, 8});
    auto k = b.input("k", DataType::Float, {1, 2, 4, 8});
    auto v = b.input("v", DataType::Float, {1, 2, 4, 8});
    auto kt = b.op("Transpose", {k}, {Attribute::makeInts("perm", {0, 1, 3, 2})}, "kt");
    auto scores = b.op("Div", {b.op("MatMul", {q, kt}, {}, "qk"), b.scalar("sqrt_d", 2.828f)}, {}, "scale");
    auto masked = b.op("Add", {scores, b.constant("mask", randomFloats({1, 1, 4, 4}, 2, -10.f, 0.f))}, {}, "mask_add");
    auto p = b.op("Softmax", {masked}, {Attribute::makeInt("axis", -1)}, "softmax");
    b.output(b.op("MatMul", {p, v}, {}, "pv"));
    Model m = b.finish();
    PassResult r = runAndCompare(m, "detect-attention");
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(m.graph.nodeCount(), 6u);
    ASSERT_EQ(r.remarks.size(), 1u);
    EXPECT_EQ(r.remarks[0].message,
              "attention at softmax: Q·Kᵀ qk (Kᵀ by kt), mask mask_add, scale scale, softmax, ·V pv");
    EXPECT_EQ(r.remarks[0].nodes.size(), 6u);
    // A Softmax not between two MatMuls is no attention.
    GraphBuilder nb("softmax", 17);
    nb.output(nb.op("Softmax", {nb.input("x", DataType::Float, {2, 4})}, {}, "sm"));
    Model n = nb.finish();
    EXPECT_TRUE(runAndCompare(n, "detect-attention").remarks.empty());
}
