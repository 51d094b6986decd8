// Golden tests for the neutral-element and identity-like rules of the algebraic pass: one small
// builder-made graph per rule, positive and negative, asserting op counts, remark text, the change
// log, idempotence and numerical equivalence (runChecked).
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "PassTestSupport.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;
using passlens::test::hasRemark;
using passlens::test::runChecked;
using passlens::test::silentAbout;

namespace {

using Counts = std::map<std::string, int>;

/// y = Relu(op(lhs, rhs)), x: float[2,3] (or `xDims`), constant `c` on the given side.
Model binary(const std::string& op, TensorPtr c, bool constantLeft, std::vector<int64_t> xDims = {2, 3}) {
    GraphBuilder b(op + "_golden");
    auto x = b.input("x", DataType::Float, xDims);
    auto k = b.constant("c", std::move(c));
    auto y = constantLeft ? b.op(op, {k, x}, {}, "bin") : b.op(op, {x, k}, {}, "bin");
    b.output(b.op("Relu", {y}, {}, "relu"));
    return b.finish();
}

}  // namespace

// ---- sub-zero -------------------------------------------------------------------------------------

TEST(AlgebraicGolden, SubZeroRemoved) {
    Model m = binary("Sub", floatTensor({3}, {0, 0, 0}), false);
    NodeId sub = *m.graph.findNode("bin");
    auto run = runChecked(m);
    EXPECT_EQ(run.before, (Counts{{"Relu", 1}, {"Sub", 1}}));
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "sub-zero", "bin: Sub with neutral constant 'c'"));
    EXPECT_TRUE(test::changeMentions(run.result, "sub-zero", sub));
}

TEST(AlgebraicGolden, ZeroMinusXIsNotSubZero) {
    Model m = binary("Sub", floatTensor({3}, {0, 0, 0}), true);  // 0 - x = -x, not x
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "sub-zero"));
}

TEST(AlgebraicGolden, SubZeroThatBroadcastsIsMissed) {
    Model m = binary("Sub", floatTensor({2, 3}, {0, 0, 0, 0, 0, 0}), false, {3});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "sub-zero", "shape or type differs from the output (broadcasting)"));
}

TEST(AlgebraicGolden, SubNonZeroConstantKept) {
    Model m = binary("Sub", floatTensor({3}, {0, 0.5f, 0}), false);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "sub-zero"));
}

// ---- div-one ---------------------------------------------------------------------------------------

TEST(AlgebraicGolden, DivOneRemoved) {
    Model m = binary("Div", floatTensor({1}, {1}), false);
    NodeId div = *m.graph.findNode("bin");
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "div-one", "bin: Div with neutral constant 'c'"));
    EXPECT_TRUE(test::changeMentions(run.result, "div-one", div));
    EXPECT_TRUE(silentAbout(run.result, "div-to-mul"));
}

TEST(AlgebraicGolden, OneOverXIsNotDivOne) {
    Model m = binary("Div", floatTensor({1}, {1}), true);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "div-one"));
}

TEST(AlgebraicGolden, DivOneThatBroadcastsIsMissed) {
    Model m = binary("Div", floatTensor({2, 3}, {1, 1, 1, 1, 1, 1}), false, {1, 3});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "div-one", "(broadcasting)"));
}

// ---- pow-one ---------------------------------------------------------------------------------------

TEST(AlgebraicGolden, PowOneRemoved) {
    Model m = binary("Pow", floatTensor({}, {1}), false);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "pow-one", "bin: Pow with neutral constant 'c'"));
}

TEST(AlgebraicGolden, PowTwoAndOneToTheXKept) {
    Model square = binary("Pow", floatTensor({}, {2}), false);
    auto run = runChecked(square);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "pow-one"));
    Model oneToX = binary("Pow", floatTensor({}, {1}), true);  // 1^x is not x
    auto run2 = runChecked(oneToX);
    EXPECT_EQ(run2.after, run2.before);
    EXPECT_TRUE(silentAbout(run2.result, "pow-one"));
}

// ---- neg-neg ---------------------------------------------------------------------------------------

TEST(AlgebraicGolden, NegNegCancels) {
    GraphBuilder b("negneg");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto n1 = b.op("Neg", {x}, {}, "neg1");
    auto n2 = b.op("Neg", {n1}, {}, "neg2");
    b.output(b.op("Relu", {n2}, {}, "relu"));
    Model m = b.finish();
    NodeId outer = *m.graph.findNode("neg2"), inner = *m.graph.findNode("neg1");
    auto run = runChecked(m);
    EXPECT_EQ(run.before, (Counts{{"Neg", 2}, {"Relu", 1}}));
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "neg-neg", "neg2: Neg(Neg(x)) = x"));
    EXPECT_TRUE(test::changeMentions(run.result, "neg-neg", outer));
    EXPECT_TRUE(test::changeMentions(run.result, "neg-neg", inner));
}

TEST(AlgebraicGolden, NegNegKeepsInnerNegWithOtherReader) {
    GraphBuilder b("negneg_shared");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto n1 = b.op("Neg", {x}, {}, "neg1");
    auto n2 = b.op("Neg", {n1}, {}, "neg2");
    b.output(b.op("Relu", {n2}, {}, "relu"));
    b.output(b.op("Sigmoid", {n1}, {}, "other"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Neg", 1}, {"Relu", 1}, {"Sigmoid", 1}}));
}

TEST(AlgebraicGolden, NegOfAbsKept) {
    GraphBuilder b("negabs");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Relu", {b.op("Neg", {b.op("Abs", {x}, {}, "abs")}, {}, "neg")}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "neg-neg"));
}

TEST(AlgebraicGolden, NegNegAsGraphOutputIsMissed) {
    GraphBuilder b("negneg_out");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Neg", {b.op("Neg", {x}, {}, "neg1")}, {}, "neg2"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "neg-neg", "graph-visible"));
}

// ---- cast ------------------------------------------------------------------------------------------

Model castModel(DataType to) {
    GraphBuilder b("cast");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto c = b.op("Cast", {x}, {Attribute::makeInt("to", (int64_t)to)}, "cast");
    b.output(b.op("Abs", {c}, {}, "abs"));
    return b.finish();
}

TEST(AlgebraicGolden, NoOpCastRemoved) {
    Model m = castModel(DataType::Float);
    NodeId cast = *m.graph.findNode("cast");
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "cast-noop", "cast: Cast to the type its input already has"));
    EXPECT_TRUE(test::changeMentions(run.result, "cast-noop", cast));
}

TEST(AlgebraicGolden, RealCastKept) {
    Model m = castModel(DataType::Double);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "cast-noop"));
}

// ---- reshape ---------------------------------------------------------------------------------------

Model reshapeModel(std::vector<int64_t> target) {
    GraphBuilder b("reshape");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto r = b.op("Reshape", {x, b.ints("shape", target)}, {}, "reshape");
    b.output(b.op("Relu", {r}, {}, "relu"));
    return b.finish();
}

TEST(AlgebraicGolden, NoOpReshapeRemoved) {
    Model m = reshapeModel({2, -1});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "reshape-noop", "reshape: Reshape to the shape its input already has"));
}

TEST(AlgebraicGolden, RealReshapeKept) {
    Model m = reshapeModel({3, 2});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "reshape-noop"));
}

// ---- concat-of-one ---------------------------------------------------------------------------------

TEST(AlgebraicGolden, ConcatOfOneRemovedConcatOfTwoKept) {
    GraphBuilder b("concat");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto y = b.input("y", DataType::Float, {2, 3});
    auto one = b.op("Concat", {x}, {Attribute::makeInt("axis", 0)}, "single");
    auto two = b.op("Concat", {one, y}, {Attribute::makeInt("axis", 0)}, "pair");
    b.output(b.op("Relu", {two}, {}, "relu"));
    Model m = b.finish();
    NodeId single = *m.graph.findNode("single");
    auto run = runChecked(m);
    EXPECT_EQ(run.before, (Counts{{"Concat", 2}, {"Relu", 1}}));
    EXPECT_EQ(run.after, (Counts{{"Concat", 1}, {"Relu", 1}}));
    EXPECT_TRUE(m.graph.findNode("pair").has_value());
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "concat-of-one", "single: Concat of a single input"));
    EXPECT_TRUE(test::changeMentions(run.result, "concat-of-one", single));
}

// ---- dropout ---------------------------------------------------------------------------------------

TEST(AlgebraicGolden, InferenceDropoutRemoved) {
    GraphBuilder b("dropout");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto d = b.op("Dropout", {x, b.scalar("ratio", 0.5f)}, {}, "drop");
    b.output(b.op("Relu", {d}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "dropout-inference", "drop: Dropout is the identity at inference"));
}

TEST(AlgebraicGolden, TrainingDropoutIsMissed) {
    GraphBuilder b("dropout_train");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto training = b.constant("training", makeTensorOf<uint8_t>(DataType::Bool, {}, {1}));
    auto d = b.op("Dropout", {x, b.scalar("ratio", 0.5f), training}, {}, "drop");
    b.output(b.op("Relu", {d}, {}, "relu"));
    Model m = b.finish();
    auto before = test::opCounts(m.graph);
    auto r = test::runPassOnce("algebraic", m);  // training mode is random: no numeric check
    EXPECT_EQ(test::opCounts(m.graph), before);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "dropout-inference", "not removed: Dropout may run in training mode"));
    EXPECT_FALSE(test::runPassOnce("algebraic", m).changed);
}

TEST(AlgebraicGolden, DropoutWithReadMaskIsMissed) {
    GraphBuilder b("dropout_mask");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto outs = b.opMulti("Dropout", {x}, 2, {}, "drop");
    b.output(b.op("Relu", {outs[0]}, {}, "relu"));
    b.output(outs[1]);
    Model m = b.finish();
    auto before = test::opCounts(m.graph);
    auto r = test::runPassOnce("algebraic", m);
    EXPECT_EQ(test::opCounts(m.graph), before);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "dropout-inference", "not removed: the Dropout mask is read"));
}
