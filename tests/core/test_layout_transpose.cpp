// Golden tests for the `transpose` and `layout` passes: op counts before/after and numerical
// equivalence with the reference interpreter.
#include <gtest/gtest.h>

#include <algorithm>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "passes/PassRegistry.h"
#include "passes/layout/LayoutPasses.h"
#include "TestSupport.h"
#include "test_layout_support.h"

using namespace passlens;
using namespace passlens::ir;

using test::countOp;
using test::optimizeAndCompare;
using test::perm;
using test::transposeOnly;

TEST(LayoutTranspose, CancelsInversePair) {
    GraphBuilder b("pair");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t1 = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    auto t2 = b.op("Transpose", {t1}, {perm({0, 3, 1, 2})});
    b.output(b.op("Relu", {t2}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(out.graph.nodeCount(), 1u);
}

TEST(LayoutTranspose, ComposesChain) {
    GraphBuilder b("chain");
    auto x = b.input("x", DataType::Float, {2, 3, 4, 5});
    auto t1 = b.op("Transpose", {x}, {perm({1, 0, 2, 3})});
    auto t2 = b.op("Transpose", {t1}, {perm({0, 2, 3, 1})});
    b.output(b.op("Relu", {t2}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);
}

TEST(LayoutTranspose, FoldsTransposeOfConstant) {
    GraphBuilder b("fold");
    auto x = b.input("x", DataType::Float, {4, 3});
    auto c = b.constant("c", randomFloats({3, 4}, 3));
    auto t = b.op("Transpose", {c}, {perm({1, 0})});
    b.output(b.op("Add", {x, t}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(out.graph.nodeCount(), 1u);
}

TEST(LayoutTranspose, PushesThroughUnaryAndCancels) {
    GraphBuilder b("unary");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t1 = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    auto r = b.op("Sigmoid", {b.op("Relu", {t1})});
    b.output(b.op("Transpose", {r}, {perm({0, 3, 1, 2})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    EXPECT_EQ(out.graph.nodeCount(), 2u);
}

TEST(LayoutTranspose, PushesThroughBroadcastWithLowerRankConstant) {
    GraphBuilder b("bcast");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t1 = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});  // 1x4x5x3
    auto c = b.constant("c", randomFloats({5, 3}, 5));       // broadcasts over the last two dims
    auto a = b.op("Mul", {t1, c});
    b.output(b.op("Transpose", {a}, {perm({0, 3, 1, 2})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutTranspose, BinaryWithTwoTransposedInputsIsPushed) {
    GraphBuilder b("two");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto y = b.input("y", DataType::Float, {1, 3, 4, 5});
    auto tx = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    auto ty = b.op("Transpose", {y}, {perm({0, 2, 3, 1})});
    b.output(b.op("Add", {tx, ty}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 1u);  // 2 -> 1: one Transpose after the Add
}

TEST(LayoutTranspose, NotPushedWhenOtherOperandNeedsATranspose) {
    GraphBuilder b("neg");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto y = b.input("y", DataType::Float, {1, 4, 5, 3});
    auto tx = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    b.output(b.op("Add", {tx, y}));
    Model m = b.finish();
    Model out = m;
    auto res = passes::makeTransposePass()->run(out, {});
    EXPECT_EQ(countOp(out, "Transpose"), 1u);
    EXPECT_FALSE(res.changed);
    bool missed = false;
    for (const auto& r : res.remarks)
        if (r.kind == passes::RemarkKind::Missed && r.message.find("not pushed") != std::string::npos) missed = true;
    EXPECT_TRUE(missed);
}

TEST(LayoutTranspose, MissedRemarkNamesLayoutSensitiveOp) {
    GraphBuilder b("sensitive");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 1, 3, 2})});
    auto w = b.constant("w", randomFloats({2, 3, 1, 1}, 9));
    b.output(b.op("Conv", {t, w}, {}, "conv"));
    Model out = b.finish();
    auto res = passes::makeTransposePass()->run(out, {});
    ASSERT_FALSE(res.remarks.empty());
    EXPECT_NE(res.remarks.back().message.find("stopped by conv (Conv): layout-sensitive"), std::string::npos) << res.remarks.back().message;
}

TEST(LayoutTranspose, ConcatAxisRewritten) {
    GraphBuilder b("concat");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto y = b.input("y", DataType::Float, {1, 2, 4, 5});
    auto tx = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    auto ty = b.op("Transpose", {y}, {perm({0, 2, 3, 1})});
    auto c = b.op("Concat", {tx, ty}, {Attribute::makeInt("axis", 3)});
    b.output(b.op("Transpose", {c}, {perm({0, 3, 1, 2})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutTranspose, SoftmaxOldOpsetRefusesMixingPerm) {
    GraphBuilder b("softmax", 11);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 1})});
    b.output(b.op("Softmax", {b.op("Transpose", {b.op("Softmax", {t}, {Attribute::makeInt("axis", 2)})}, {perm({1, 0, 2})})},
                  {Attribute::makeInt("axis", 1)}));
    Model m = b.finish();
    Model out = optimizeAndCompare(m, transposeOnly());
    // axis=2 with perm [0,2,1]: the trailing block {2} maps to {1} -> not pushable before opset 13.
    EXPECT_EQ(countOp(out, "Transpose"), 2u);
}

TEST(LayoutTranspose, TfStyleTransposesAroundEveryElementwiseOpRemoved) {
    GraphBuilder b("tf_style");
    auto x = b.input("x", DataType::Float, {1, 3, 6, 6});
    auto cur = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});  // NHWC as TF exporters do
    const char* ops[] = {"Relu", "Sigmoid", "Tanh", "Abs"};
    for (int i = 0; i < 4; ++i) {
        auto back = b.op("Transpose", {cur}, {perm({0, 3, 1, 2})});
        auto y = b.op(ops[i], {back});
        auto bias = b.constant("bias" + std::to_string(i), randomFloats({3, 1, 1}, 20 + i));
        auto z = b.op("Add", {y, bias});
        cur = b.op("Transpose", {z}, {perm({0, 2, 3, 1})});
    }
    b.output(b.op("Transpose", {cur}, {perm({0, 3, 1, 2})}));
    Model m = b.finish();
    EXPECT_EQ(countOp(m, "Transpose"), 10u);
    Model out = optimizeAndCompare(m, transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
    // Idempotent.
    Model again = out;
    auto res = passes::makeTransposePass()->run(again, {});
    EXPECT_FALSE(res.changed);
}

TEST(LayoutPass, ConvReluPoolToNhwcAndBack) {
    GraphBuilder b("cnn", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto w = b.constant("w", randomFloats({4, 3, 3, 3}, 1));
    auto c = b.op("Conv", {x, w}, {Attribute::makeInts("pads", {1, 1, 1, 1})});
    auto r = b.op("Relu", {c});
    auto w2 = b.constant("w2", randomFloats({4, 4, 1, 1}, 2));
    auto c2 = b.op("Conv", {r, w2});
    auto a = b.op("Add", {c2, r});
    auto p = b.op("MaxPool", {a}, {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {2, 2})});
    b.output(b.op("GlobalAveragePool", {p}));
    Model m = b.finish();
    std::vector<std::unique_ptr<passes::Pass>> ps;
    ps.push_back(passes::makeLayoutPass());
    ps.push_back(passes::makeTransposePass());
    Model nhwc = optimizeAndCompare(m, ps, "NHWC");
    EXPECT_EQ(passes::nonStandardDomains(nhwc), std::vector<std::string>{"passlens.nhwc"});
    EXPECT_TRUE(passes::usesNonStandardDomains(nhwc));
    EXPECT_LE(countOp(nhwc, "Transpose"), 2u);  // one at the input, one at the output
    Model back = optimizeAndCompare(nhwc, ps, "NCHW");
    EXPECT_FALSE(passes::usesNonStandardDomains(back));
    EXPECT_EQ(countOp(back, "Transpose"), 0u);
    EXPECT_EQ(back.opsetFor("passlens.nhwc"), 0);
}

TEST(LayoutPass, RejectsBadTargetLayout) {
    GraphBuilder b("bad");
    auto x = b.input("x", DataType::Float, {1, 3, 4, 4});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    passes::PassOptions o;
    o.targetLayout = "NCWH";
    EXPECT_THROW(passes::makeLayoutPass()->run(m, o), passlens::Error);
}

namespace {
void realModelRoundTrip(const std::string& file) {
    onnxio::ImportOptions io;
    Model m = onnxio::importModelFile(test::realModel(file), io);
    // Pin every symbolic input dim to a small size (batch 1, spatial 64).
    std::vector<std::pair<std::string, int64_t>> pins;
    for (ValueId v : eval::runtimeInputs(m.graph)) {
        const auto& t = m.graph.value(v).type;
        if (!t.shape) continue;
        for (size_t i = 0; i < t.shape->rank(); ++i)
            if (!t.shape->dims[i].isStatic() && !t.shape->dims[i].param.empty())
                pins.emplace_back(t.shape->dims[i].param, i == 0 ? 1 : 64);
    }
    io.pinnedDims = pins;
    m = onnxio::importModelFile(test::realModel(file), io);
    std::vector<std::unique_ptr<passes::Pass>> ps;
    ps.push_back(passes::makeLayoutPass());
    ps.push_back(passes::makeTransposePass());
    Model nhwc = optimizeAndCompare(m, ps, "NHWC", pins);
    size_t io_count = eval::runtimeInputs(nhwc.graph).size() + nhwc.graph.outputs().size();
    EXPECT_GT(countOp(nhwc, "Conv"), 0u);
    EXPECT_EQ(countOp(m, "Transpose"), 0u);
    EXPECT_LE(countOp(nhwc, "Transpose"), io_count) << file;
    ::testing::Test::RecordProperty("transposes_after", static_cast<int>(countOp(nhwc, "Transpose")));
    Model back = optimizeAndCompare(nhwc, ps, "NCHW", pins);
    EXPECT_FALSE(passes::usesNonStandardDomains(back));
    EXPECT_EQ(countOp(back, "Transpose"), 0u);
    auto err = onnxio::checkModel(back);
    EXPECT_FALSE(err.has_value()) << *err;
}
}  // namespace

TEST(LayoutRealModel, PaddleOcrClsNhwcRoundTrip) { realModelRoundTrip("ch_ppocr_mobile_v2.0_cls_infer.onnx"); }
TEST(LayoutRealModel, PaddleOcrDetNhwcRoundTrip) { realModelRoundTrip("ch_PP-OCRv4_det_infer.onnx"); }

TEST(LayoutPass, RegisteredTransposeInAllLayoutOnlyByName) {
    const auto& reg = passes::PassRegistry::global();
    ASSERT_TRUE(reg.contains("layout"));
    ASSERT_TRUE(reg.contains("transpose"));
    auto all = reg.pipeline(passes::Level::All);
    EXPECT_NE(std::find(all.begin(), all.end(), "transpose"), all.end());
    EXPECT_EQ(std::find(all.begin(), all.end(), "layout"), all.end());
}

TEST(LayoutPass, CliOptimizeWithTargetLayout) {
    const std::string out = test::tempDir("layout_cli") + "/cls_nhwc.onnx";
    auto ok = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", out, "--level",
                            "none", "--passes", "layout,transpose", "--target-layout", "NHWC"});
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    auto bad = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", out, "--level",
                             "none", "--passes", "layout", "--target-layout", "NCWH"});
    EXPECT_EQ(bad.exitCode, 2);
}

TEST(LayoutTranspose, ReduceKeepdimsAxesRewritten) {
    GraphBuilder b("reduce", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    auto r = b.op("ReduceMean", {t}, {Attribute::makeInts("axes", {1, 2}), Attribute::makeInt("keepdims", 1)});
    b.output(b.op("Transpose", {r}, {perm({0, 3, 1, 2})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutTranspose, ReduceWithoutKeepdimsPushedWithSqueezedPerm) {
    GraphBuilder b("reduce0", 13);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});
    b.output(b.op("ReduceMax", {t}, {Attribute::makeInts("axes", {1}), Attribute::makeInt("keepdims", 0)}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    ASSERT_EQ(countOp(out, "Transpose"), 1u);
    for (NodeId n : out.graph.nodeOrder()) {
        const Node& node = out.graph.node(n);
        if (node.opType == "ReduceMax") {
            EXPECT_EQ(node.attrInts("axes"), std::vector<int64_t>{2});
        }
        if (node.opType == "Transpose") {
            EXPECT_EQ(node.attrInts("perm"), (std::vector<int64_t>{0, 2, 1}));
        }
    }
}

TEST(LayoutTranspose, ReduceOverSpatialAxesWithoutKeepdimsNeedsNoTranspose) {
    GraphBuilder b("gap_tf", 11);
    auto x = b.input("x", DataType::Float, {1, 3, 4, 5});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 3, 1})});  // NHWC, then a TF-style global mean
    b.output(b.op("ReduceMean", {t}, {Attribute::makeInts("axes", {1, 2}), Attribute::makeInt("keepdims", 0)}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);  // [N,C] comes out the same either way
}

TEST(LayoutTranspose, SoftmaxOpset13AxisRewritten) {
    GraphBuilder b("softmax13", 13);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t = b.op("Transpose", {x}, {perm({0, 2, 1})});
    auto s = b.op("Softmax", {t}, {Attribute::makeInt("axis", 2)});
    b.output(b.op("Transpose", {s}, {perm({0, 2, 1})}));
    Model out = optimizeAndCompare(b.finish(), transposeOnly());
    EXPECT_EQ(countOp(out, "Transpose"), 0u);
}

TEST(LayoutRealModel, TransposePassNeverAddsTransposesOnPaddleOcrRec) {
    const std::vector<std::pair<std::string, int64_t>> pins = {
        {"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 64}};
    onnxio::ImportOptions io;
    io.pinnedDims = pins;
    Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"), io);
    Model out = optimizeAndCompare(m, transposeOnly(), "", pins);
    EXPECT_LE(countOp(out, "Transpose"), countOp(m, "Transpose"));
}
