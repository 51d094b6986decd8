// Algebraic rules on nested Wheres (where-nested-condition: torch's masked_fill pair) and on
// Unsqueeze chains (unsqueeze-unsqueeze): what the result reads, op counts, the refusals when the
// dropped input would widen the result or the middle value has another reader, interpreter
// equivalence, the ONNX checker and idempotence (runChecked).
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

/// The node computing the graph's first output.
const Node& outputNode(const Model& m) { return m.graph.node(m.graph.value(m.graph.outputs()[0]).producer); }

float constantValue(const Model& m, ValueId v) {
    const TensorPtr& t = m.graph.value(v).initializer;
    return t && t->elementCount() == 1 ? t->as<float>()[0] : -1e9f;
}

/// x > 0 computed by its own node and constant each time, as exporters write `m` twice.
ValueId positive(GraphBuilder& b, ValueId x, const std::string& tag) {
    return b.op("Greater", {x, b.scalar("zero_" + tag, 0.f)});
}

}  // namespace

TEST(WhereRules, MaskedFillOfAConditionThenOfItsNegationIsOneWhere) {
    // masked_fill(~m, -100).masked_fill(m, 0): Where(m, 0, Where(Not(m), -100, x)).
    GraphBuilder b("masked_fill");
    ValueId x = b.input("x", DataType::Float, {2, 3, 4});
    ValueId inner = b.op("Where", {b.op("Not", {positive(b, x, "a")}), b.scalar("minus100", -100.f), x});
    b.output(b.op("Where", {positive(b, x, "b"), b.scalar("zero", 0.f), inner}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_TRUE(test::hasRemark(run.result, passes::RemarkKind::Applied, "where-nested-condition", "never chosen"));
    const Node& out = outputNode(m);
    ASSERT_EQ(out.opType, "Where");
    EXPECT_EQ(constantValue(m, out.inputs[1]), 0.f);
    EXPECT_EQ(constantValue(m, out.inputs[2]), -100.f) << "x is no longer read";
}

TEST(WhereRules, NegatedOuterConditionSwapsTheBranches) {
    // Where(Not(m), -100, Where(m, 0, x)) = Where(m, 0, -100).
    GraphBuilder b("masked_fill_mirror");
    ValueId x = b.input("x", DataType::Float, {2, 3, 4});
    ValueId m0 = positive(b, x, "a");
    ValueId inner = b.op("Where", {m0, b.scalar("zero", 0.f), x});
    b.output(b.op("Where", {b.op("Not", {m0}), b.scalar("minus100", -100.f), inner}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    const Node& out = outputNode(m);
    EXPECT_EQ(out.inputs[0], m0);
    EXPECT_EQ(constantValue(m, out.inputs[1]), 0.f);
    EXPECT_EQ(constantValue(m, out.inputs[2]), -100.f);
}

TEST(WhereRules, SameConditionTwiceSkipsTheInnerTrueBranch) {
    GraphBuilder b("same_condition");
    ValueId x = b.input("x", DataType::Float, {2, 3, 4});
    ValueId inner = b.op("Where", {positive(b, x, "a"), b.scalar("one", 1.f), x});
    b.output(b.op("Where", {positive(b, x, "b"), b.scalar("two", 2.f), inner}));
    Model m = b.finish();
    test::runChecked(m);
    EXPECT_EQ(outputNode(m).inputs[2], x);
}

TEST(WhereRules, ADroppedInputThatBroadcastsWiderStays) {
    // The condition and the fills are [3, 4]; x is [2, 3, 4]: without it the result loses a dim.
    GraphBuilder b("widening");
    ValueId x = b.input("x", DataType::Float, {2, 3, 4});
    ValueId y = b.input("y", DataType::Float, {3, 4});
    ValueId inner = b.op("Where", {b.op("Not", {positive(b, y, "a")}), b.scalar("minus100", -100.f), x});
    b.output(b.op("Where", {positive(b, y, "b"), b.scalar("zero", 0.f), inner}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_TRUE(test::silentAbout(run.result, "where-nested-condition"));
    EXPECT_EQ(run.after.at("Where"), 2);
}

TEST(WhereRules, DifferentConditionsStay) {
    GraphBuilder b("different");
    ValueId x = b.input("x", DataType::Float, {2, 3});
    ValueId inner = b.op("Where", {b.op("Not", {positive(b, x, "a")}), b.scalar("minus100", -100.f), x});
    b.output(b.op("Where", {b.op("Less", {x, b.scalar("half", 0.5f)}), b.scalar("zero", 0.f), inner}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_TRUE(test::silentAbout(run.result, "where-nested-condition"));
}

TEST(UnsqueezeMerge, TwoUnsqueezesBecomeOne) {
    // [3, 4] at 1 then at 0: [1, 3, 1, 4], one Unsqueeze at [0, 2].
    GraphBuilder b("unsqueezes");
    ValueId x = b.input("x", DataType::Float, {3, 4});
    ValueId mid = b.op("Unsqueeze", {x, b.ints("a1", {1})});
    b.output(b.op("Relu", {b.op("Unsqueeze", {mid, b.ints("a0", {0})})}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.at("Unsqueeze"), 1);
    const Node& u = m.graph.node(m.graph.value(outputNode(m).inputs[0]).producer);
    const TensorPtr& axes = m.graph.value(u.inputs[1]).initializer;
    ASSERT_TRUE(axes);
    EXPECT_EQ(std::vector<int64_t>(axes->as<int64_t>(), axes->as<int64_t>() + axes->elementCount()), (std::vector<int64_t>{0, 2}));
}

TEST(UnsqueezeMerge, NegativeAxesAndSeveralAtOnce) {
    // [3, 4] at [-1, 0] is [1, 3, 4, 1]; then at [-2, 1] it is [1, 1, 3, 4, 1, 1]: one
    // Unsqueeze at [0, 1, 4, 5] (the interpreter compares the tensors).
    GraphBuilder b("unsqueezes_negative");
    ValueId x = b.input("x", DataType::Float, {3, 4});
    ValueId mid = b.op("Unsqueeze", {x, b.ints("first", {-1, 0})});
    b.output(b.op("Relu", {b.op("Unsqueeze", {mid, b.ints("second", {-2, 1})})}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.at("Unsqueeze"), 1);
}

TEST(UnsqueezeMerge, AMiddleValueWithAnotherReaderStays) {
    GraphBuilder b("unsqueezes_shared");
    ValueId x = b.input("x", DataType::Float, {3, 4});
    ValueId mid = b.op("Unsqueeze", {x, b.ints("a1", {1})});
    b.output(b.op("Unsqueeze", {mid, b.ints("a0", {0})}));
    b.output(b.op("Relu", {mid}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.at("Unsqueeze"), 2);
    EXPECT_TRUE(test::silentAbout(run.result, "unsqueeze-unsqueeze"));
}
