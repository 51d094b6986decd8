// dim-as-shape-slice (algebraic, level basic): Unsqueeze(Gather(Shape(x), i), [0]) becomes
// Shape(x, start=i, end=i+1) from opset 15, negative indices and a Shape that already has
// start/end included. Refused below opset 15 (no start/end then) and when the gathered scalar
// has another reader (nothing would be saved). Op counts, interpreter outputs at two bindings,
// idempotence.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using Counts = std::map<std::string, int>;

struct SliceOptions {
    int64_t opset = 17;
    int64_t index = 0;
    bool shapeFromOne = false;  ///< Shape(x, start=1): the Gather indexes [seq, 16]
    bool scalarAlsoRead = false;
};

/// zeros of [x.size(i), 5] from x: [batch, seq, 16], as torch.onnx writes torch.zeros(x.size(i), 5).
Model dimIntoConcat(const SliceOptions& o) {
    GraphBuilder b("dim_slice", o.opset);
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(16)});
    std::vector<Attribute> shapeAttrs;
    if (o.shapeFromOne) shapeAttrs.push_back(Attribute::makeInt("start", 1));
    ValueId shape = b.op("Shape", {x}, shapeAttrs, "shape");
    ValueId dim = b.op("Gather", {shape, b.constant("i", int64Tensor({}, {o.index}))}, {}, "gather");
    ValueId vec = o.opset >= 13 ? b.op("Unsqueeze", {dim, b.ints("axes", {0})}, {}, "unsqueeze")
                                : b.op("Unsqueeze", {dim}, {Attribute::makeInts("axes", {0})}, "unsqueeze");
    ValueId sizes = b.op("Concat", {vec, b.ints("five", {5})}, {Attribute::makeInt("axis", 0)}, "sizes");
    b.output(b.op("ConstantOfShape", {sizes}, {Attribute::makeTensor("value", floatTensor({1}, {1.5f}))}, "fill"));
    if (o.scalarAlsoRead) b.output(b.op("Neg", {dim}, {}, "neg"));
    return b.finish();
}

PassResult runAndCompare(Model& m) {
    return test::runCheckedAtBindings(m, {"algebraic", "dce"}, {{{"batch", 2}, {"seq", 3}}, {{"batch", 4}, {"seq", 7}}})
        .steps.front()
        .result;
}

std::pair<int64_t, int64_t> startEnd(const Model& m) {
    const Node& n = m.graph.node(*m.graph.findNode("unsqueeze"));
    EXPECT_EQ(n.opType, "Shape");
    return {n.attrInt("start", -99), n.attrInt("end", -99)};
}

}  // namespace

TEST(DimAsShapeSlice, GatheredDimBecomesOneShapeSlice) {
    for (int64_t index : {0, 1, -1, -3}) {
        Model m = dimIntoConcat({.index = index});
        EXPECT_EQ(test::opCounts(m.graph), (Counts{{"Concat", 1}, {"ConstantOfShape", 1}, {"Gather", 1}, {"Shape", 1}, {"Unsqueeze", 1}}));
        const PassResult r = runAndCompare(m);
        EXPECT_EQ(test::opCounts(m.graph), (Counts{{"Concat", 1}, {"ConstantOfShape", 1}, {"Shape", 1}})) << index;
        const int64_t dim = index < 0 ? index + 3 : index;
        EXPECT_EQ(startEnd(m), std::make_pair(dim, dim + 1)) << index;
        EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "dim-as-shape-slice", "Shape(start=" + std::to_string(dim)));
    }
}

TEST(DimAsShapeSlice, ShapeWithStartIsOffset) {
    // Shape(x, start=1) is [seq, 16]: its entry 0 is dim 1 of x.
    Model m = dimIntoConcat({.index = 0, .shapeFromOne = true});
    runAndCompare(m);
    EXPECT_EQ(startEnd(m), std::make_pair(int64_t(1), int64_t(2)));
}

TEST(DimAsShapeSlice, RefusedBeforeOpset15AndWhenTheScalarIsReadElsewhere) {
    // Shape has no start/end before opset 15: the Shape stays whole (unsqueeze-into-gather still
    // makes the Unsqueeze of the gathered dim a Gather with index [i]).
    Model old = dimIntoConcat({.opset = 13});
    const PassResult r = runAndCompare(old);
    EXPECT_EQ(test::opCounts(old.graph), (Counts{{"Concat", 1}, {"ConstantOfShape", 1}, {"Gather", 1}, {"Shape", 1}}));
    for (NodeId id : old.graph.nodeOrder())
        EXPECT_FALSE(old.graph.node(id).attr("start")) << old.graph.node(id).displayName();
    EXPECT_TRUE(test::silentAbout(r, "dim-as-shape-slice"));

    Model shared = dimIntoConcat({.scalarAlsoRead = true});
    const Counts sharedBefore = test::opCounts(shared.graph);
    const PassResult r2 = runAndCompare(shared);
    EXPECT_EQ(test::opCounts(shared.graph), sharedBefore);
    EXPECT_TRUE(test::hasRemark(r2, RemarkKind::Missed, "dim-as-shape-slice", "gather's scalar has other readers"));
}

TEST(DimAsShapeSlice, GatherWithAOneElementIndexBecomesOneShapeSlice) {
    // Gather(Shape(x), [i]) is the same 1-element vector (gather-permuted-vector writes it).
    for (int64_t index : {1, -1}) {
        GraphBuilder b("dim_slice_vector", 17);
        ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(16)});
        ValueId shape = b.op("Shape", {x}, {}, "shape");
        ValueId vec = b.op("Gather", {shape, b.ints("i", {index})}, {}, "gather");
        ValueId sizes = b.op("Concat", {vec, b.ints("five", {5})}, {Attribute::makeInt("axis", 0)}, "sizes");
        b.output(b.op("ConstantOfShape", {sizes}, {Attribute::makeTensor("value", floatTensor({1}, {1.5f}))}, "fill"));
        Model m = b.finish();
        const PassResult r = runAndCompare(m);
        EXPECT_EQ(test::opCounts(m.graph), (Counts{{"Concat", 1}, {"ConstantOfShape", 1}, {"Shape", 1}})) << index;
        const Node& n = m.graph.node(*m.graph.findNode("gather"));
        const int64_t dim = index < 0 ? index + 3 : index;
        EXPECT_EQ(n.opType, "Shape");
        EXPECT_EQ(n.attrInt("start", -99), dim);
        EXPECT_EQ(n.attrInt("end", -99), dim + 1);
        EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "dim-as-shape-slice", "Shape(start=" + std::to_string(dim)));
    }
}
