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

TEST(UnsqueezeSink, SwinMaskUnsqueezedAfterTheFillIsUnsqueezedAtItsOperands) {
    // torchvision's shifted-window mask: where((m[:, None] - m[:, :, None]) == 0, 0, -100)
    // then unsqueezed for the heads, [nW, 16] → [1, nW, 1, 16, 16]. The outer Unsqueeze goes;
    // the two operand Unsqueezes take its axes (one node less).
    GraphBuilder b("swin_mask");
    ValueId labels = b.input("labels", DataType::Float, {4, 16});
    ValueId rows = b.op("Unsqueeze", {labels, b.ints("a1", {1})});
    ValueId cols = b.op("Unsqueeze", {labels, b.ints("a2", {2})});
    ValueId same = b.op("Equal", {b.op("Sub", {rows, cols}), b.scalar("zero", 0.f)});
    ValueId mask = b.op("Where", {same, b.scalar("keep", 0.f), b.scalar("minus100", -100.f)});
    ValueId wide = b.op("Unsqueeze", {mask, b.ints("heads", {0, 2})});
    ValueId scores = b.input("scores", DataType::Float, {2, 4, 3, 16, 16});
    b.output(b.op("Add", {scores, wide}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.before.at("Unsqueeze"), 3);
    EXPECT_EQ(run.after.at("Unsqueeze"), 2);
    EXPECT_EQ(run.after.at("Where"), 1);
    EXPECT_TRUE(test::hasRemark(run.result, passes::RemarkKind::Applied, "unsqueeze-through-elementwise", "each operand takes it"));
    EXPECT_EQ(m.graph.value(outputNode(m).inputs[1]).type.shape->rank(), 5u) << "the Where makes the 5-D mask itself";
}

TEST(UnsqueezeSink, AnOperandThatWouldNeedItsOwnUnsqueezeStays) {
    // Sub(x, Unsqueeze(y)): x is an input, so x would need a new Unsqueeze; a Sub read twice,
    // and an Unsqueeze of lower rank ([16, 1], broadcast from the right) are refused too.
    for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(variant);
        GraphBuilder b("refused");
        ValueId x = b.input("x", DataType::Float, {4, 16, 1});
        ValueId y = b.input("y", DataType::Float, {4, 16});
        ValueId left = variant == 0 ? x : b.op("Unsqueeze", {y, b.ints("a0", {2})});
        ValueId right = variant == 2 ? b.op("Unsqueeze", {b.input("w", DataType::Float, {16}), b.ints("a3", {1})}) : b.op("Unsqueeze", {y, b.ints("a1", {1})});
        ValueId diff = b.op("Sub", {left, right});
        b.output(b.op("Unsqueeze", {diff, b.ints("a2", {0})}));
        if (variant == 1) b.output(b.op("Relu", {diff}));
        Model m = b.finish();
        auto run = test::runChecked(m);
        EXPECT_TRUE(test::silentAbout(run.result, "unsqueeze-through-elementwise"));
        EXPECT_EQ(run.after.at("Unsqueeze"), run.before.at("Unsqueeze"));
    }
}

TEST(WhereRules, TheDroppedBranchIsErasedSoItsInputsHaveOneReaderAgain) {
    // After where-nested-condition, Not(m) and the inner Where read nothing live: they go in the
    // same run, and the mask chain's Unsqueeze then sinks to the Sub's operands.
    GraphBuilder b("masked_fill_then_unsqueeze");
    ValueId labels = b.input("labels", DataType::Float, {4, 16});
    ValueId diff = b.op("Sub", {b.op("Unsqueeze", {labels, b.ints("a1", {1})}), b.op("Unsqueeze", {labels, b.ints("a2", {2})})});
    ValueId inner = b.op("Where", {b.op("Not", {b.op("Equal", {diff, b.scalar("z1", 0.f)})}), b.scalar("minus100", -100.f), diff});
    ValueId outer = b.op("Where", {b.op("Equal", {diff, b.scalar("z2", 0.f)}), b.scalar("zero", 0.f), inner});
    b.output(b.op("Unsqueeze", {outer, b.ints("a3", {0})}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.count("Not"), 0u);
    EXPECT_EQ(run.after.at("Where"), 1);
    EXPECT_EQ(run.after.at("Equal"), 1);
    EXPECT_EQ(run.after.at("Unsqueeze"), 2);
}
