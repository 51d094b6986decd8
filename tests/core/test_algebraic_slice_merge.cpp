// algebraic's slice-slice-merge: two Slices in a row on different axes are one Slice, with constant
// ends or with ends read as adjacent slices of one Shape (torchvision Swin's window un-pad, whose
// ends Shape(x0, 1, 2) and Shape(x0, 2, 3) become Shape(x0, 1, 3)). Op counts, what the merged
// Slice reads, the refusals (one axis cut twice, ends that would need a Concat, a middle value read
// elsewhere), the interpreter's outputs at bindings where the ends clamp or not, and idempotence.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "ir/Tensor.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

ValueId shapeSlice(GraphBuilder& b, ValueId x, int64_t start, int64_t end) {
    return b.op("Shape", {x}, {Attribute::makeInt("start", start), Attribute::makeInt("end", end)});
}

std::vector<int64_t> ints(const Model& m, ValueId v) {
    const TensorPtr& t = m.graph.value(v).initializer;
    if (!t || t->dtype != DataType::Int64) return {};
    return std::vector<int64_t>(t->as<int64_t>(), t->as<int64_t>() + t->elementCount());
}

const Node& onlyNode(const Model& m, const std::string& op) {
    for (NodeId n : m.graph.nodeOrder())
        if (m.graph.node(n).opType == op) return m.graph.node(n);
    throw std::runtime_error("no " + op);
}

/// x: [n, H, W, 3] cut back to y's [h, w] as Swin does after its padded window attention:
/// Slice(Slice(x, 0, Shape(y, 1, 2), axis 1), 0, Shape(y, 2, 3), axis 2) (axes swapped with
/// `heightFirst` false).
Model unpad(bool heightFirst) {
    GraphBuilder b("unpad");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::symbol("H"), Dim::symbol("W"), Dim::of(3)});
    ValueId y = b.inputSymbolic("y", DataType::Float, {Dim::symbol("n"), Dim::symbol("h"), Dim::symbol("w"), Dim::of(3)});
    const int64_t first = heightFirst ? 1 : 2, second = heightFirst ? 2 : 1;
    ValueId mid = b.op("Slice", {x, b.ints("zero_a", {0}), shapeSlice(b, y, first, first + 1), b.ints("axis_a", {first})});
    ValueId out =
        b.op("Slice", {mid, b.ints("zero_b", {0}), shapeSlice(b, y, second, second + 1), b.ints("axis_b", {second})});
    b.output(b.op("Relu", {out}));
    return b.finish();
}

const std::vector<test::DimBindings> kUnpadBindings{
    {{"n", 2}, {"H", 8}, {"W", 12}, {"h", 5}, {"w", 10}},  // ends inside: the pad is cut away
    {{"n", 1}, {"H", 4}, {"W", 4}, {"h", 7}, {"w", 2}},    // an end past the dim clamps
    {{"n", 1}, {"H", 3}, {"W", 5}, {"h", 3}, {"w", 5}},    // nothing to cut
};

}  // namespace

TEST(SliceMerge, ConstantEndsOnTwoAxesAreOneSlice) {
    // [4, 6, 8][1:3, :, 0:7:2]: steps and a negative axis carry over.
    GraphBuilder b("two_slices");
    ValueId x = b.input("x", DataType::Float, {4, 6, 8});
    ValueId mid = b.op("Slice", {x, b.ints("s1", {1}), b.ints("e1", {3}), b.ints("a1", {0})});
    b.output(b.op("Relu", {b.op("Slice", {mid, b.ints("s2", {0}), b.ints("e2", {7}), b.ints("a2", {-1}), b.ints("p2", {2})})}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.before.at("Slice"), 2);
    EXPECT_EQ(run.after.at("Slice"), 1);
    EXPECT_TRUE(test::hasRemark(run.result, passes::RemarkKind::Applied, "slice-slice-merge", "one Slice cuts them all"));
    const Node& s = onlyNode(m, "Slice");
    ASSERT_EQ(s.inputs.size(), 5u);
    EXPECT_EQ(ints(m, s.inputs[1]), (std::vector<int64_t>{1, 0}));
    EXPECT_EQ(ints(m, s.inputs[2]), (std::vector<int64_t>{3, 7}));
    EXPECT_EQ(ints(m, s.inputs[3]), (std::vector<int64_t>{0, 2}));
    EXPECT_EQ(ints(m, s.inputs[4]), (std::vector<int64_t>{1, 2}));
}

TEST(SliceMerge, ThreeSlicesOnThreeAxesAreOneSlice) {
    GraphBuilder b("three_slices");
    ValueId x = b.input("x", DataType::Float, {4, 6, 8});
    ValueId s = x;
    for (int64_t axis = 0; axis < 3; ++axis)
        s = b.op("Slice", {s, b.ints("s" + std::to_string(axis), {1}), b.ints("e" + std::to_string(axis), {-1}),
                           b.ints("a" + std::to_string(axis), {axis})});
    b.output(s);
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.at("Slice"), 1);
}

TEST(SliceMerge, EndsFromAdjacentShapeSlicesAreOneShapeSlice) {
    for (bool heightFirst : {true, false}) {
        SCOPED_TRACE(heightFirst ? "height first" : "width first");
        Model m = unpad(heightFirst);
        auto result = test::runCheckedAtBindings(m, {"algebraic", "dce"}, kUnpadBindings);
        auto counts = test::opCounts(m.graph);
        EXPECT_EQ(counts["Slice"], 1);
        EXPECT_EQ(counts["Shape"], 1);
        const Node& s = onlyNode(m, "Slice");
        const Node& ends = m.graph.node(m.graph.value(s.inputs[2]).producer);
        EXPECT_EQ(ends.attrInt("start", -1), 1);
        EXPECT_EQ(ends.attrInt("end", -1), 3);
        EXPECT_EQ(ints(m, s.inputs[3]), (std::vector<int64_t>{1, 2})) << "the axes follow the Shape's order";
        EXPECT_TRUE(test::hasRemark(result.steps.front().result, passes::RemarkKind::Applied, "slice-slice-merge", "one Slice cuts them all"));
    }
}

TEST(SliceMerge, EndsThatWouldNeedAConcatStay) {
    // One constant end, one read from a shape; then two Shape slices that are not adjacent.
    for (int variant = 0; variant < 2; ++variant) {
        GraphBuilder b("mixed_ends");
        ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::symbol("H"), Dim::symbol("W"), Dim::of(3)});
        ValueId y = b.inputSymbolic("y", DataType::Float, {Dim::symbol("n"), Dim::symbol("h"), Dim::symbol("w"), Dim::of(3)});
        ValueId end1 = variant == 0 ? b.ints("two", {2}) : shapeSlice(b, y, 0, 1);
        ValueId mid = b.op("Slice", {x, b.ints("zero_a", {0}), end1, b.ints("axis_a", {1})});
        b.output(b.op("Slice", {mid, b.ints("zero_b", {0}), shapeSlice(b, y, 2, 3), b.ints("axis_b", {2})}));
        Model m = b.finish();
        auto result = test::runCheckedAtBindings(m, {"algebraic"}, kUnpadBindings);
        EXPECT_EQ(test::opCounts(m.graph)["Slice"], 2);
        EXPECT_TRUE(test::hasRemark(result.steps.front().result, passes::RemarkKind::Missed, "slice-slice-merge",
                                    "would need a Concat"));
    }
}

TEST(SliceMerge, OneAxisCutTwiceOrAMiddleValueReadElsewhereStays) {
    GraphBuilder b("refused");
    ValueId x = b.input("x", DataType::Float, {4, 6, 8});
    // Axis 2 written as 2 and as -1: the same axis, two cuts.
    ValueId mid = b.op("Slice", {x, b.ints("s1", {1}), b.ints("e1", {7}), b.ints("a1", {2})});
    b.output(b.op("Slice", {mid, b.ints("s2", {1}), b.ints("e2", {4}), b.ints("a2", {-1})}));
    // Different axes, but the middle value is an output too.
    ValueId shared = b.op("Slice", {x, b.ints("s3", {1}), b.ints("e3", {3}), b.ints("a3", {0})});
    b.output(shared);
    b.output(b.op("Slice", {shared, b.ints("s4", {1}), b.ints("e4", {3}), b.ints("a4", {1})}));
    Model m = b.finish();
    auto run = test::runChecked(m);
    EXPECT_EQ(run.after.at("Slice"), 4);
    EXPECT_TRUE(test::silentAbout(run.result, "slice-slice-merge"));
}
