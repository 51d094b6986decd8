// The drawn edge a fusion refusal points at (the graph view highlights it).
#include <gtest/gtest.h>

#include "analysis/BlockingEdge.h"
#include "examples/Examples.h"

using namespace passlens;
using analysis::blockingEdges;
using Edges = std::vector<std::pair<ir::NodeId, ir::NodeId>>;

namespace {
struct Blocked {
    ir::Model m = examples::find("blocked_fusion")->build();
    const ir::Graph& g = m.graph;
    ir::NodeId conv = *g.findNode("conv"), bn = *g.findNode("bn"), tap = *g.findNode("conv_tap.mean"),
               relu = *g.findNode("relu");
    ir::ValueId convOut = g.node(conv).outputs[0];
};
}  // namespace

TEST(AnalysisBlockingEdge, SecondConsumerGetsTheEdge) {
    Blocked b;
    EXPECT_EQ(blockingEdges(b.g, b.convOut, b.tap, b.conv), (Edges{{b.conv, b.tap}}));
    // Without a blocking consumer: the edge into the explained node.
    EXPECT_EQ(blockingEdges(b.g, b.convOut, ir::kNone, b.bn), (Edges{{b.conv, b.bn}}));
    // Neither reads it: every edge of the value.
    Edges all = blockingEdges(b.g, b.convOut, b.relu, b.conv);
    EXPECT_EQ(all.size(), 2u);
    EXPECT_NE(std::find(all.begin(), all.end(), std::pair{b.conv, b.bn}), all.end());
    EXPECT_NE(std::find(all.begin(), all.end(), std::pair{b.conv, b.tap}), all.end());
}

TEST(AnalysisBlockingEdge, NoOperatorProducerNoEdge) {
    Blocked b;
    const ir::ValueId image = b.g.inputs()[0];
    EXPECT_TRUE(blockingEdges(b.g, image, b.conv, b.conv).empty());
    EXPECT_TRUE(blockingEdges(b.g, ir::kNone, b.tap, b.conv).empty());
}
