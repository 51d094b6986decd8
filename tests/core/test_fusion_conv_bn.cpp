// Conv + BatchNormalization folding: positive, the traps (second reader, training mode,
// non-constant weights), numerical equivalence, and every BatchNorm of a real model.
#include <gtest/gtest.h>

#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Examples.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

std::map<std::string, int> opCounts(const Graph& g) {
    std::map<std::string, int> c;
    for (NodeId n : g.nodeOrder()) ++c[g.node(n).opType];
    return c;
}

/// Runs `passes` and returns the fuse-conv-bn step, checking outputs stay within 1e-4.
PassResult runAndCompare(Model& m, const std::vector<std::string>& names, const std::vector<std::pair<std::string, int64_t>>& dims = {}) {
    Model original = m;
    auto inputs = eval::randomInputs(m, 11, dims);
    eval::RunOptions ro;
    ro.dims = dims;
    auto before = eval::run(m, inputs, ro);
    PassManager pm;
    for (const auto& n : names) pm.addPass(n);
    auto result = pm.run(m);
    auto after = eval::run(m, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, after, before, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
    EXPECT_FALSE(onnxio::checkModel(m).has_value());
    return result.steps.back().result;
}

bool hasMissed(const PassResult& r, const std::string& text) {
    for (const auto& m : r.remarks)
        if (m.kind == RemarkKind::Missed && m.rule == "fold-conv-bn" && m.message.find(text) != std::string::npos) return true;
    return false;
}

Model convBn(bool constantWeights, int64_t trainingMode) {
    GraphBuilder b("conv_bn", 15);
    auto x = b.input("x", DataType::Float, {1, 2, 5, 5});
    ValueId w = constantWeights ? b.constant("w", randomFloats({3, 2, 3, 3}, 1)) : b.input("w", DataType::Float, {3, 2, 3, 3});
    auto conv = b.op("Conv", {x, w}, {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
    std::vector<Attribute> attrs{Attribute::makeFloat("epsilon", 1e-3f)};
    if (trainingMode) attrs.push_back(Attribute::makeInt("training_mode", 1));
    auto bn = b.op("BatchNormalization",
                   {conv, b.constant("g", randomFloats({3}, 2, 0.5f, 1.5f)), b.constant("b", randomFloats({3}, 3)),
                    b.constant("m", randomFloats({3}, 4)), b.constant("v", randomFloats({3}, 5, 0.5f, 2.f))},
                   attrs, "bn");
    b.output(b.op("Relu", {bn}, {}, "relu"));
    return b.finish();
}

}  // namespace

TEST(FusionConvBn, FoldsIntoOneConvWithProvenance) {
    Model m = examples::find("conv_bn_relu")->build();
    NodeId conv = *m.graph.findNode("conv"), bn = *m.graph.findNode("bn");
    PassResult r = runAndCompare(m, {"fuse-conv-bn"});
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
    bool provenance = false;
    for (const auto& c : r.changes)
        if (c.kind == ChangeKind::Replaced && c.provenance == std::vector<NodeId>{std::min(conv, bn), std::max(conv, bn)}) provenance = true;
    EXPECT_TRUE(provenance);
    // Idempotent: nothing left to fold.
    PassManager again;
    again.addPass("fuse-conv-bn");
    EXPECT_FALSE(again.run(m).steps.back().result.changed);
}

TEST(FusionConvBn, SecondReaderBlocksAndIsNamed) {
    Model m = examples::find("blocked_fusion")->build();
    PassResult r = runAndCompare(m, {"fuse-conv-bn"});
    EXPECT_EQ(opCounts(m.graph)["BatchNormalization"], 1);
    EXPECT_TRUE(hasMissed(r, "conv + bn not folded: conv's output has 2 readers (bn, conv_tap.mean)"));
}

TEST(FusionConvBn, TrainingModeIsRefused) {
    Model m = convBn(true, 1);
    PassManager pm;
    pm.addPass("fuse-conv-bn");
    PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph)["BatchNormalization"], 1);
    EXPECT_TRUE(hasMissed(r, "is in training mode"));
}

TEST(FusionConvBn, NonConstantWeightsAreRefused) {
    Model m = convBn(false, 0);
    PassResult r = runAndCompare(m, {"fuse-conv-bn"});
    EXPECT_EQ(opCounts(m.graph)["BatchNormalization"], 1);
    EXPECT_TRUE(hasMissed(r, "conv's weights are not a float32 constant"));
}

TEST(FusionConvBn, WithoutBiasAndEpsilon) {
    Model m = convBn(true, 0);
    runAndCompare(m, {"fuse-conv-bn"});
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
}

TEST(FusionConvBn, EveryBatchNormOfPaddleOcrClsFolds) {
    Model m = onnxio::importModelFile(test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
    ASSERT_EQ(opCounts(m.graph)["BatchNormalization"], 35);
    runAndCompare(m, {"constant-folding", "fuse-conv-bn"},
                  {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 64}});
    EXPECT_EQ(opCounts(m.graph)["BatchNormalization"], 0);
}

// The applied remark names the fused Conv (the Remarks dock selects it); only the constants the
// folded pair read are removed — an unrelated unread initializer is left for DCE.
TEST(FusionConvBn, AppliedRemarkNamesTheFusedConvAndOnlyItsConstantsGo) {
    Model m = convBn(true, 0);
    const size_t lonelyBytes = 16;
    m.graph.addInitializer("unrelated", makeTensorOf(DataType::Float, {4}, std::vector<float>(lonelyBytes / 4, 1.f)));
    PassResult r = runAndCompare(m, {"fuse-conv-bn"});
    ASSERT_EQ(opCounts(m.graph)["BatchNormalization"], 0);
    NodeId fused = m.graph.value(m.graph.node(*m.graph.findNode("relu")).inputs[0]).producer;
    bool named = false;
    for (const auto& rm : r.remarks)
        if (rm.kind == RemarkKind::Applied && rm.nodes == std::vector<NodeId>{fused}) named = true;
    EXPECT_TRUE(named);
    EXPECT_TRUE(m.graph.findValue("unrelated").has_value());
    for (const char* gone : {"w", "g", "b", "m", "v"}) EXPECT_FALSE(m.graph.findValue(gone).has_value()) << gone;
}
