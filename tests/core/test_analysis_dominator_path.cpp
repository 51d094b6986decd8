// The nodes between a node and its immediate (post-)dominator, as the dominator tree view
// highlights them in the graph.
#include <gtest/gtest.h>

#include <algorithm>

#include "DiamondGraph.h"
#include "analysis/DominatorPath.h"
#include "examples/Examples.h"
#include "examples/Builder.h"
#include "ir/Error.h"

using namespace passlens;
using analysis::DominatorTree;
using analysis::nodesOnPaths;
using analysis::pathToImmediateDominator;

namespace {

using test::Diamond;

ir::NodeId byName(const ir::Graph& g, const std::string& name) {
    auto n = g.findNode(name);
    EXPECT_TRUE(n.has_value()) << name;
    return n.value_or(ir::kNone);
}

std::vector<std::string> names(const ir::Graph& g, const std::vector<ir::NodeId>& ids) {
    std::vector<std::string> out;
    for (auto n : ids) out.push_back(g.node(n).name);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST(AnalysisDominatorPath, DiamondForkToJoinCoversBothBranches) {
    Diamond g;
    auto path = nodesOnPaths(g.m.graph, g.a, g.d);
    EXPECT_EQ(path, (std::vector<ir::NodeId>{g.a, g.b, g.c, g.d}));
    // One branch only: from b to the join.
    EXPECT_EQ(nodesOnPaths(g.m.graph, g.b, g.d), (std::vector<ir::NodeId>{g.b, g.d}));
    // A node to itself.
    EXPECT_EQ(nodesOnPaths(g.m.graph, g.e, g.e), (std::vector<ir::NodeId>{g.e}));
}

TEST(AnalysisDominatorPath, UnreachableTargetGivesEmptyPath) {
    Diamond g;
    EXPECT_TRUE(nodesOnPaths(g.m.graph, g.b, g.c).empty());  // siblings
    EXPECT_TRUE(nodesOnPaths(g.m.graph, g.e, g.a).empty());  // backwards
}

TEST(AnalysisDominatorPath, VirtualEndsMeanEverythingReachable) {
    Diamond g;
    EXPECT_EQ(nodesOnPaths(g.m.graph, g.d, ir::kNone), (std::vector<ir::NodeId>{g.d, g.e}));
    EXPECT_EQ(nodesOnPaths(g.m.graph, ir::kNone, g.b), (std::vector<ir::NodeId>{g.a, g.b}));
}

TEST(AnalysisDominatorPath, PostDominatorPathOfForkIsTheDiamond) {
    Diamond g;
    auto post = DominatorTree::build(g.m.graph, true);
    EXPECT_EQ(pathToImmediateDominator(g.m.graph, post, g.a), (std::vector<ir::NodeId>{g.a, g.b, g.c, g.d}));
    EXPECT_EQ(pathToImmediateDominator(g.m.graph, post, g.b), (std::vector<ir::NodeId>{g.b, g.d}));
    // The last node's post-dominator is the virtual exit: only itself.
    EXPECT_EQ(pathToImmediateDominator(g.m.graph, post, g.e), (std::vector<ir::NodeId>{g.e}));
    auto dom = DominatorTree::build(g.m.graph, false);
    // Dominator tree: from the immediate dominator down to the node.
    EXPECT_EQ(pathToImmediateDominator(g.m.graph, dom, g.d), (std::vector<ir::NodeId>{g.a, g.b, g.c, g.d}));
    EXPECT_EQ(pathToImmediateDominator(g.m.graph, dom, g.e), (std::vector<ir::NodeId>{g.d, g.e}));
}

TEST(AnalysisDominatorPath, BranchyExampleSkipPathAndSideExit) {
    const auto* ex = examples::find("branchy_dominators");
    ASSERT_NE(ex, nullptr);
    ir::Model m = ex->build();
    const auto& g = m.graph;
    auto post = DominatorTree::build(g, true);
    // A branch of diamond 1 ends at its activation.
    EXPECT_EQ(names(g, pathToImmediateDominator(g, post, byName(g, "left"))),
              (std::vector<std::string>{"left", "left.relu"}));
    // stem.relu reaches the side output without passing the Concat: only the virtual exit
    // post-dominates it, so everything downstream is on its paths.
    ir::NodeId stem = byName(g, "stem.relu");
    EXPECT_EQ(post.idom(stem), ir::kNone);
    EXPECT_EQ(names(g, pathToImmediateDominator(g, post, stem)),
              (std::vector<std::string>{"head", "join1", "join2", "left", "left.relu", "path1", "path2.tanh",
                                        "path2a", "path2b", "right", "right.sigmoid", "side.pool", "stem.relu"}));
    // Dominator tree: the Concat is dominated by stem.relu (the skip path), so the region between
    // them is both diamonds but neither the head nor the side exit.
    auto dom = DominatorTree::build(g, false);
    ir::NodeId join2 = byName(g, "join2");
    ASSERT_EQ(dom.idom(join2), stem);
    EXPECT_EQ(names(g, pathToImmediateDominator(g, dom, join2)),
              (std::vector<std::string>{"join1", "join2", "left", "left.relu", "path1", "path2.tanh", "path2a",
                                        "path2b", "right", "right.sigmoid", "stem.relu"}));
}

TEST(AnalysisDominatorPath, UnknownNodeIsBadInput) {
    Diamond g;
    EXPECT_THROW(nodesOnPaths(g.m.graph, 999, g.a), Error);
}
