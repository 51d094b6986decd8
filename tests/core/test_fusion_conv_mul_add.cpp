// Conv + per-channel Mul/Add folding: chains fold into one Conv; the traps (a second reader of the
// Conv output, a coefficient that varies over space, non-constant weights) are refused.
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

PassResult runAndCompare(Model& m) {
    return test::runChecked(m, "fuse-conv-mul-add", test::fusionCheckOptions(5)).result;
}

struct CmOptions {
    std::vector<int64_t> scaleDims{3, 1, 1};
    bool withBias = true, tap = false, constantWeights = true, scaleFirst = false;
};

Model convMulAdd(const CmOptions& o) {
    GraphBuilder b("conv_mul_add", 13);
    auto x = b.input("x", DataType::Float, {1, 2, 5, 5});
    ValueId w = o.constantWeights ? b.constant("w", randomFloats({3, 2, 3, 3}, 1)) : b.input("w", DataType::Float, {3, 2, 3, 3});
    std::vector<ValueId> ins{x, w};
    if (o.withBias) ins.push_back(b.constant("b", randomFloats({3}, 2)));
    auto y = b.op("Conv", ins, {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
    auto s = b.constant("s", randomFloats(o.scaleDims, 3, 0.5f, 2.f));
    auto scaled = o.scaleFirst ? b.op("Mul", {s, y}, {}, "mul") : b.op("Mul", {y, s}, {}, "mul");
    auto shifted = b.op("Add", {scaled, b.constant("t", randomFloats({1, 3, 1, 1}, 4))}, {}, "add");
    b.output(b.op("Relu", {shifted}, {}, "relu"));
    if (o.tap) b.output(b.op("Neg", {y}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(FusionConvMulAdd, ChainFoldsIntoOneConv) {
    for (CmOptions o : {CmOptions{}, CmOptions{.scaleDims = {1}, .withBias = false}, CmOptions{.scaleDims = {1, 3, 1, 1}, .scaleFirst = true}}) {
        Model m = convMulAdd(o);
        PassResult r = runAndCompare(m);
        EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Conv", 1}, {"Relu", 1}}));
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("conv + mul folded into one Conv (per-channel Mul)"), std::string::npos)
            << remarkText(r, RemarkKind::Applied);
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("conv + add folded into one Conv (per-channel Add)"), std::string::npos);
        EXPECT_FALSE(m.graph.findValue("s").has_value());
        PassManager again;
        again.addPass("fuse-conv-mul-add");
        EXPECT_FALSE(again.run(m).steps.back().result.changed);
    }
}

TEST(FusionConvMulAdd, SecondReaderIsRefusedAndNamed) {
    Model m = convMulAdd({.tap = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Mul"], 1);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("conv + mul not folded: conv's output has 2 readers (mul, tap)"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionConvMulAdd, SpatiallyVaryingCoefficientIsNotPerChannel) {
    Model m = convMulAdd({.scaleDims = {3, 5, 5}});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Mul"], 1);
    EXPECT_EQ(opCounts(m.graph)["Add"], 1);
    EXPECT_FALSE(r.changed);
}

TEST(FusionConvMulAdd, NonConstantWeightsAreLeftAlone) {
    Model m = convMulAdd({.constantWeights = false});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(m.graph.nodeCount(), 4u);
    EXPECT_FALSE(r.changed);
}
