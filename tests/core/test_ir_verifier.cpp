// The structural verifier and topological order on the fast paths taken at scale: names checked
// through the graph's name table when no subgraph needs them, the list itself returned when it is
// already sorted. Each check also has its broken counterpart.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "ir/Graph.h"
#include "ir/Verifier.h"

using namespace passlens::ir;

namespace {

/// x -> Relu -> a -> Neg -> y (graph output).
Graph twoNodes() {
    Graph g;
    g.name = "g";
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float));
    ValueId a = g.addValue("a"), y = g.addValue("y");
    g.addNode("Relu", {x}, {a}, {}, "relu");
    g.addNode("Neg", {a}, {y}, {}, "neg");
    g.markOutput(y);
    return g;
}

bool mentions(const VerifyResult& r, const std::string& text) {
    for (const auto& p : r.problems)
        if (p.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(IRVerifier, CleanGraphPasses) {
    Graph g = twoNodes();
    EXPECT_TRUE(verifyGraph(g).ok());
}

TEST(IRVerifier, OutputNamedLikeAnInputIsDefinedTwice) {
    Graph g = twoNodes();
    g.value(*g.findValue("a")).name = "x";  // bypasses the name table, as a buggy pass could
    const VerifyResult r = verifyGraph(g);
    EXPECT_TRUE(mentions(r, "value 'x' is defined twice")) << (r.ok() ? "" : r.problems.front());
}

TEST(IRVerifier, OutputNamedLikeAnInputIsDefinedTwiceWhenSubgraphsNeedNames) {
    Graph g = twoNodes();
    // An If whose branches read nothing: its presence switches the verifier to tracking names.
    auto branch = std::make_shared<Graph>();
    branch->name = "branch";
    ValueId c = branch->addValue("c");
    branch->addNode("Constant", {}, {c}, {});
    branch->markOutput(c);
    ValueId cond = g.addValue("cond"), out = g.addValue("if_out");
    g.addNode("Constant", {}, {cond}, {}, "cond");
    g.addNode("If", {cond}, {out}, {Attribute::makeGraph("then_branch", branch), Attribute::makeGraph("else_branch", branch)}, "if");
    g.markOutput(out);
    ASSERT_FALSE(g.nodesWithSubgraphs().empty());
    EXPECT_TRUE(verifyGraph(g).ok()) << verifyGraph(g).problems.front();
    g.value(*g.findValue("a")).name = "x";
    EXPECT_TRUE(mentions(verifyGraph(g), "value 'x' is defined twice"));
}

TEST(IRVerifier, ReadOfAValueWithoutProducerIsUndefined) {
    Graph g = twoNodes();
    ValueId ghost = g.addValue("ghost");
    g.setNodeInput(*g.findNode("neg"), 0, ghost);
    EXPECT_TRUE(mentions(verifyGraph(g), "reads undefined value 'ghost'"));
}

TEST(IRTopologicalOrder, SortedListIsReturnedAsIs) {
    Graph g = twoNodes();
    const auto order = g.topologicalOrder();
    ASSERT_TRUE(order.has_value());
    EXPECT_EQ(*order, g.nodeOrder());
}

TEST(IRTopologicalOrder, UnsortedListPutsProducersFirst) {
    Graph g = twoNodes();
    // A reader placed before its producer: the fast path must notice and sort.
    ValueId z = g.addValue("z"), w = g.addValue("w");
    NodeId reader = g.addNode("Abs", {z}, {w}, {}, "abs", {}, g.firstNode());
    NodeId producer = g.addNode("Sigmoid", {*g.findValue("y")}, {z}, {}, "sig");
    g.markOutput(w);
    ASSERT_TRUE(g.precedes(reader, producer));
    const auto order = g.topologicalOrder();
    ASSERT_TRUE(order.has_value());
    auto pos = [&](NodeId n) { return std::find(order->begin(), order->end(), n) - order->begin(); };
    EXPECT_LT(pos(producer), pos(reader));
    EXPECT_EQ(order->size(), g.nodeCount());
}

TEST(IRTopologicalOrder, CycleHasNoOrder) {
    Graph g = twoNodes();
    // relu now reads neg's output: relu -> neg -> relu.
    g.setNodeInput(*g.findNode("relu"), 0, *g.findValue("y"));
    EXPECT_FALSE(g.topologicalOrder().has_value());
    EXPECT_TRUE(mentions(verifyGraph(g), "has a cycle"));
}
