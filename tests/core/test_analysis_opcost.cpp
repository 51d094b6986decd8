// Op registry: in-place flag (shared with the memory planner) and FLOP/byte cost estimates.
#include <gtest/gtest.h>

#include "analysis/OpRegistry.h"
#include "examples/Builder.h"

using namespace passlens;
using ir::Attribute;
using ir::DataType;

namespace {
ir::NodeId producer(const ir::Model& m, ir::ValueId v) { return m.graph.value(v).producer; }
}  // namespace

TEST(AnalysisOpCost, InplaceFlag) {
    EXPECT_TRUE(analysis::isInplaceElementwise("Relu"));
    EXPECT_TRUE(analysis::isInplaceElementwise("Add", "ai.onnx"));
    EXPECT_TRUE(analysis::isInplaceElementwise("BatchNormalization"));
    EXPECT_FALSE(analysis::isInplaceElementwise("Cast"));        // element type changes
    EXPECT_FALSE(analysis::isInplaceElementwise("Conv"));
    EXPECT_FALSE(analysis::isInplaceElementwise("Transpose"));
    EXPECT_FALSE(analysis::isInplaceElementwise("Relu", "com.custom"));
}

TEST(AnalysisOpCost, ConvMatMulAndElementwiseFromStaticShapes) {
    ir::GraphBuilder b("cost");
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto conv = b.op("Conv", {x, b.constant("w", ir::randomFloats({4, 3, 3, 3}, 1))},
                     {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");  // 1x4x8x8
    auto relu = b.op("Relu", {conv}, {}, "relu");
    auto flat = b.op("Reshape", {relu, b.ints("shape", {2, 128})}, {}, "flat");
    auto mm = b.op("MatMul", {flat, b.constant("m", ir::randomFloats({128, 5}, 2))}, {}, "mm");  // 2x5
    auto red = b.op("ReduceSum", {mm, b.ints("axes", {1})}, {}, "sum");
    b.output(red);
    auto m = b.finish();
    auto c = analysis::costOf(m.graph, producer(m, conv));
    EXPECT_TRUE(c.known) << c.note;
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 256 * 27);
    EXPECT_DOUBLE_EQ(c.bytes, (192 + 108 + 256) * 4.0);
    c = analysis::costOf(m.graph, producer(m, relu));
    EXPECT_DOUBLE_EQ(c.flops, 256);
    EXPECT_DOUBLE_EQ(c.bytes, 512 * 4.0);
    c = analysis::costOf(m.graph, producer(m, flat));
    EXPECT_TRUE(c.known);
    EXPECT_DOUBLE_EQ(c.flops, 0);
    EXPECT_DOUBLE_EQ(c.bytes, 256 * 4.0 * 2 + 2 * 8.0);
    c = analysis::costOf(m.graph, producer(m, mm));
    EXPECT_DOUBLE_EQ(c.flops, 2.0 * 10 * 128);
    c = analysis::costOf(m.graph, producer(m, red));
    EXPECT_DOUBLE_EQ(c.flops, 10);
}

TEST(AnalysisOpCost, UnknownShapesAndOpsAreFlagged) {
    ir::GraphBuilder b("unknown");
    auto x = b.inputSymbolic("x", DataType::Float, {ir::Dim::symbol("N"), ir::Dim::of(3)});
    auto r = b.op("Relu", {x}, {}, "relu");
    auto custom = b.op("Thing", {r}, {}, "thing", "com.example");
    b.output(custom);
    auto& g = b.graph();
    auto c = analysis::costOf(g, producer(b.model(), r));
    EXPECT_FALSE(c.known);
    EXPECT_NE(c.note.find("static"), std::string::npos) << c.note;
    c = analysis::costOf(g, producer(b.model(), custom));
    EXPECT_FALSE(c.known);
    EXPECT_NE(c.note.find("Thing"), std::string::npos) << c.note;
}
