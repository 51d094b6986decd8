// MatMul + Add → Gemm: the positive case, Transposes folded into transA/transB, and the refusals
// (3-D operands, a second reader of the product, a non-constant or non-broadcastable addend).
#include <gtest/gtest.h>

#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "ir/Builder.h"
#include "onnx/Checker.h"
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

PassResult runAndCompare(Model& m) {
    Model original = m;
    auto inputs = eval::randomInputs(m, 5);
    auto before = eval::run(m, inputs);
    PassManager pm;
    pm.addPass("fuse-matmul-add");
    auto result = pm.run(m);
    auto after = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, after, before, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
    EXPECT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    return result.steps.back().result;
}

std::string remarkText(const PassResult& r, RemarkKind kind) {
    std::string s;
    for (const auto& m : r.remarks)
        if (m.kind == kind) s += m.message + "\n";
    return s;
}

struct MmOptions {
    bool transposeA = false, transposeB = false, threeD = false, tap = false, inputBias = false;
    std::vector<int64_t> biasDims{3};
};

Model matmulAdd(const MmOptions& o) {
    GraphBuilder b("matmul_add", 13);
    ValueId a = o.threeD ? b.input("a", DataType::Float, {2, 4, 8})
                         : o.transposeA ? b.op("Transpose", {b.input("a", DataType::Float, {8, 4})}, {}, "ta")
                                        : b.input("a", DataType::Float, {4, 8});
    ValueId w = o.transposeB ? b.op("Transpose", {b.input("w", DataType::Float, {3, 8})}, {Attribute::makeInts("perm", {1, 0})}, "tb")
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
