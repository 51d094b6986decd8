#include <gtest/gtest.h>

#include "analysis/OpRegistry.h"
#include "ir/Builder.h"

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
