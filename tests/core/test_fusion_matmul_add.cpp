// MatMul + Add → Gemm: the positive case, Transposes folded into transA/transB, and the refusals
// (3-D operands, a second reader of the product, a non-constant or non-broadcastable addend).
// 3-D A is never flattened around a Gemm (3 nodes for 2): the remark says what it would take.
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

PassResult runAndCompare(Model& m) {
    return test::runChecked(m, "fuse-matmul-add", test::fusionCheckOptions(5)).result;
}

struct MmOptions {
    bool transposeA = false, transposeB = false, threeD = false, tap = false, inputBias = false, inputWeights = false;
    std::vector<int64_t> biasDims{3};
    std::vector<Dim> symbolicA{};  ///< A's dims when some are symbolic
};

Model matmulAdd(const MmOptions& o) {
    GraphBuilder b("matmul_add", 13);
    ValueId a = !o.symbolicA.empty() ? b.inputSymbolic("a", DataType::Float, o.symbolicA)
              : o.threeD ? b.input("a", DataType::Float, {2, 4, 8})
                         : o.transposeA ? b.op("Transpose", {b.input("a", DataType::Float, {8, 4})}, {}, "ta")
                                        : b.input("a", DataType::Float, {4, 8});
    ValueId w = o.inputWeights ? b.input("w", DataType::Float, {8, 3})
              : o.transposeB ? b.op("Transpose", {b.input("w", DataType::Float, {3, 8})}, {Attribute::makeInts("perm", {1, 0})}, "tb")
                             : b.constant("w", randomFloats({8, 3}, 1));
    auto y = b.op("MatMul", {a, w}, {}, "mm");
    ValueId bias = o.inputBias ? b.input("bias", DataType::Float, o.biasDims) : b.constant("bias", randomFloats(o.biasDims, 2));
    b.output(b.op("Relu", {b.op("Add", {y, bias}, {}, "add")}, {}, "relu"));
    if (o.tap) b.output(b.op("Neg", {y}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(FusionMatMulAdd, BecomesGemm) {
    for (std::vector<int64_t> dims : {std::vector<int64_t>{3}, {1, 3}, {4, 1}, {4, 3}, {}}) {
        Model m = matmulAdd({.biasDims = dims});
        PassResult r = runAndCompare(m);
        EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Gemm", 1}, {"Relu", 1}}));
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("mm + add fused into Gemm"), std::string::npos);
    }
}

TEST(FusionMatMulAdd, TransposesFoldIntoTransAAndTransB) {
    Model m = matmulAdd({.transposeA = true, .transposeB = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Gemm", 1}, {"Relu", 1}}));
    const Node& gemm = m.graph.node(m.graph.nodeOrder()[0]);
    EXPECT_EQ(gemm.attrInt("transA", 0), 1);
    EXPECT_EQ(gemm.attrInt("transB", 0), 1);
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("Transpose of A as transA, Transpose of B as transB"), std::string::npos);
}

TEST(FusionMatMulAdd, ThreeDimensionalOperandsAreRefused) {
    Model m = matmulAdd({.threeD = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Gemm"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("mm + add not fused into Gemm: Gemm needs 2-D operands, mm multiplies ranks 3 and 2"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionMatMulAdd, SecondReaderOfTheProductIsRefusedAndNamed) {
    Model m = matmulAdd({.tap = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Gemm"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("mm's output has 2 readers (add, tap)"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionMatMulAdd, AddendMustBeAConstantThatBroadcasts) {
    Model m = matmulAdd({.inputBias = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Gemm"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("the addend 'bias' is not a constant"), std::string::npos);
    Model m2 = matmulAdd({.biasDims = {1, 4, 3}});
    PassResult r2 = runAndCompare(m2);
    EXPECT_EQ(opCounts(m2.graph)["Gemm"], 0);
    EXPECT_NE(remarkText(r2, RemarkKind::Missed).find("of shape [1, 4, 3] does not broadcast"), std::string::npos)
        << remarkText(r2, RemarkKind::Missed);
}

TEST(FusionMatMulAdd, TransposeOfAConstantIsStoredPreTransposed) {
    GraphBuilder b("matmul_const_t", 13);
    auto a = b.input("a", DataType::Float, {2, 4, 8});
    auto wt = b.op("Transpose", {b.constant("w", randomFloats({3, 8}, 1))}, {}, "wt");
    b.output(b.op("MatMul", {a, wt}, {}, "mm"));
    Model m = b.finish();
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"MatMul", 1}}));
    EXPECT_FALSE(m.graph.findValue("w").has_value());
    auto pre = m.graph.findValue("w_transposed");
    ASSERT_TRUE(pre.has_value());
    EXPECT_EQ(m.graph.value(*pre).initializer->dims, (std::vector<int64_t>{8, 3}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("wt folded into mm's constant operand (pre-transposed)"), std::string::npos);
}

TEST(FusionMatMulAdd, ThreeDimensionalStaticASaysWhatFlatteningWouldTake) {
    Model m = matmulAdd({.threeD = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Add", 1}, {"MatMul", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Missed)
                  .find("mm multiplies ranks 3 and 2; flattening would take Reshape A [2, 4, 8] to [8, 8], Gemm, "
                        "Reshape back to [2, 4, 3] (3 nodes for 2, the product is one BLAS call already), so it is not done"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Missed, "matmul-add-gemm", "Reshape back to [2, 4, 3]"));
}

TEST(FusionMatMulAdd, ThreeDimensionalDynamicLeadingDimsNeedShapeSliceConcat) {
    Model m = matmulAdd({.symbolicA = {Dim::symbol("N"), Dim(), Dim::of(8)}});
    PassResult r = test::runPassOnce("fuse-matmul-add", m);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(opCounts(m.graph)["Gemm"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed)
                  .find("mm multiplies ranks 3 and 2; flattening would need Shape, Slice and Concat to restore A's leading dims "
                        "[N, ?] around Reshape, Gemm, Reshape (6 nodes for 2), so it is not done"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionMatMulAdd, ThreeDimensionalRemarkNamesTheMissingConstants) {
    Model m = matmulAdd({.threeD = true, .inputBias = true});
    PassResult r = runAndCompare(m);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("ranks 3 and 2; flattening A to 2-D would need a constant addend broadcastable to [3]"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    Model m2 = matmulAdd({.threeD = true, .biasDims = {4, 3}});
    PassResult r2 = runAndCompare(m2);
    EXPECT_NE(remarkText(r2, RemarkKind::Missed).find("would need a constant addend broadcastable to [3]"), std::string::npos)
        << remarkText(r2, RemarkKind::Missed);
    Model m3 = matmulAdd({.threeD = true, .inputWeights = true});
    PassResult r3 = runAndCompare(m3);
    EXPECT_NE(remarkText(r3, RemarkKind::Missed).find("ranks 3 and 2; flattening A to 2-D would need B to be a constant 2-D initializer"),
              std::string::npos)
        << remarkText(r3, RemarkKind::Missed);
}

TEST(FusionMatMulAdd, ThreeDimensionalSecondReaderIsRefusedFirst) {
    Model m = matmulAdd({.threeD = true, .tap = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["Gemm"], 0);
    const std::string missed = remarkText(r, RemarkKind::Missed);
    EXPECT_NE(missed.find("mm's output has 2 readers (add, tap)"), std::string::npos) << missed;
    EXPECT_EQ(missed.find("flattening"), std::string::npos) << missed;
}

// PP-OCRv4 rec's transformer block: 9 MatMul+Add pairs with A [1, 40, K] once its dims are pinned
// and the extended level has folded its shape computations; each is kept, with the flattening it
// would take named.
TEST(FusionMatMulAdd, PaddleOcrRecThreeDimensionalPairsNameTheirFlattening) {
    onnxio::ImportOptions options;
    options.pinnedDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
    Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"), options);
    PassManager pm;
    pm.addLevel(Level::Extended);
    PipelineOptions pipeline;
    pipeline.fixedPoint = true;  // the attention Reshapes' shapes fold only on the second round
    pipeline.keepSnapshots = false;
    PassResult r;
    for (const PipelineStep& step : pm.run(m, pipeline).steps)
        if (step.result.name == "fuse-matmul-add") r = step.result;
    int flattenable = 0;
    for (const auto& remark : r.remarks)
        if (remark.kind == RemarkKind::Missed && remark.message.find("ranks 3 and 2; flattening would take Reshape A [1, 40, ") != std::string::npos &&
            remark.message.find("(3 nodes for 2, the product is one BLAS call already)") != std::string::npos)
            ++flattenable;
    EXPECT_EQ(flattenable, 9) << remarkText(r, RemarkKind::Missed);
    EXPECT_FALSE(r.changed);
}
