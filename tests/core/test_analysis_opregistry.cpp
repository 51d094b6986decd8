#include <gtest/gtest.h>

#include "analysis/OpRegistry.h"
#include "examples/Builder.h"

using namespace passlens;
using analysis::OpPattern;

TEST(AnalysisOpRegistry, KindsFollowTvm) {
    EXPECT_EQ(analysis::patternOfOpType("Relu"), OpPattern::ElemWise);
    EXPECT_EQ(analysis::patternOfOpType("Add"), OpPattern::Broadcast);
    EXPECT_EQ(analysis::patternOfOpType("Transpose"), OpPattern::Injective);
    EXPECT_EQ(analysis::patternOfOpType("ReduceMean"), OpPattern::CommReduce);
    EXPECT_EQ(analysis::patternOfOpType("Conv"), OpPattern::OutEWiseFusable);
    EXPECT_EQ(analysis::patternOfOpType("LSTM"), OpPattern::Opaque);
    EXPECT_EQ(analysis::patternOfOpType("If"), OpPattern::Opaque);
    EXPECT_EQ(analysis::patternOfOpType("Relu", "com.custom"), OpPattern::Opaque);
}

TEST(AnalysisOpRegistry, BroadcastWithEqualShapesCountsAsElemWise) {
    ir::GraphBuilder gb("bcast");
    auto x = gb.input("x", ir::DataType::Float, {2, 3});
    auto y = gb.input("y", ir::DataType::Float, {2, 3});
    auto bias = gb.input("b", ir::DataType::Float, {3});
    auto same = gb.op("Add", {x, y}, {}, "same");
    auto bc = gb.op("Add", {same, bias}, {}, "bc");
    gb.output(bc);
    auto m = gb.finish();
    EXPECT_EQ(analysis::patternOf(m.graph, m.graph.value(same).producer), OpPattern::ElemWise);
    EXPECT_EQ(analysis::patternOf(m.graph, m.graph.value(bc).producer), OpPattern::Broadcast);
}

// A named symbolic dim is one value wherever it appears (ONNX dim_param), so "N×3 + N×3" is
// elementwise; "N×3 + M×3" and an unnamed unknown dim may broadcast at run time.
TEST(AnalysisOpRegistry, SameNamedSymbolicDimsCountAsElemWise) {
    ir::GraphBuilder gb("symbolic");
    auto x = gb.input("x", ir::DataType::Float, {2, 3});
    auto y = gb.input("y", ir::DataType::Float, {2, 3});
    auto z = gb.input("z", ir::DataType::Float, {2, 3});
    auto same = gb.op("Add", {x, y}, {}, "same");
    auto other = gb.op("Add", {same, z}, {}, "other");
    gb.output(other);
    auto m = gb.finish();
    auto setShape = [&](ir::ValueId v, ir::Dim first) {
        m.graph.value(v).type.shape = ir::Shape{{first, ir::Dim::of(3)}};
    };
    for (ir::ValueId v : {x, y, same, other}) setShape(v, ir::Dim::symbol("N"));
    setShape(z, ir::Dim::symbol("M"));
    const ir::NodeId sameNode = m.graph.value(same).producer, otherNode = m.graph.value(other).producer;
    EXPECT_EQ(analysis::patternOf(m.graph, sameNode), OpPattern::ElemWise);
    EXPECT_EQ(analysis::patternOf(m.graph, otherNode), OpPattern::Broadcast);
    EXPECT_EQ(analysis::edgePattern(m.graph, otherNode, same), OpPattern::ElemWise);
    EXPECT_EQ(analysis::edgePattern(m.graph, otherNode, z), OpPattern::Broadcast);
    setShape(y, ir::Dim{});  // unknown, unnamed
    EXPECT_EQ(analysis::patternOf(m.graph, sameNode), OpPattern::Broadcast);
}
