// The dominator tree as a drawing: one box per node plus the virtual root, one edge per
// immediate-dominator link, and dot puts every parent above its children.
#include <gtest/gtest.h>

#include <map>

#include "analysis/Dominators.h"
#include "examples/Examples.h"
#include "examples/Builder.h"
#include "layout/DominatorTreeDisplay.h"

using namespace passlens;
using analysis::DominatorTree;
using layout::buildDominatorTreeDisplay;
using layout::kVirtualRootKey;

TEST(LayoutDominatorTree, OneBoxPerNodeAndOneEdgePerIdomLink) {
    ir::Model m = examples::find("branchy_dominators")->build();
    for (bool post : {true, false}) {
        auto tree = DominatorTree::build(m.graph, post);
        auto dg = buildDominatorTreeDisplay(m.graph, tree);
        ASSERT_EQ(dg.nodes.size(), m.graph.nodeCount() + 1);
        EXPECT_EQ(dg.opBoxCount, m.graph.nodeCount());
        EXPECT_EQ(dg.nodes[0].key, kVirtualRootKey);
        EXPECT_EQ(dg.nodes[0].title, post ? "exit" : "entry");
        ASSERT_EQ(dg.edges.size(), m.graph.nodeCount());
        for (const auto& e : dg.edges) {
            const ir::NodeId parent = tree.idom(e.to);
            EXPECT_EQ(e.from, parent == ir::kNone ? kVirtualRootKey : parent) << m.graph.node(e.to).name;
        }
    }
}

TEST(LayoutDominatorTree, ConstantLeavesAreHiddenUnlessAsked) {
    ir::GraphBuilder b("with_constant_node");
    auto x = b.input("x", ir::DataType::Float, {4});
    auto c = b.op("Constant", {}, {ir::Attribute::makeTensor("value", ir::floatTensor({4}, {1, 2, 3, 4}))}, "k");
    b.output(b.op("Add", {x, c}, {}, "add"));
    ir::Model m = b.finish();
    auto post = DominatorTree::build(m.graph, true);
    EXPECT_EQ(buildDominatorTreeDisplay(m.graph, post).opBoxCount, 1u);  // only the Add
    EXPECT_EQ(buildDominatorTreeDisplay(m.graph, post, {.hideConstantLeaves = false}).opBoxCount, 2u);
    // In the dominator tree the Constant is a leaf too (it dominates nothing: Add also reads x).
    auto dom = DominatorTree::build(m.graph, false);
    EXPECT_EQ(buildDominatorTreeDisplay(m.graph, dom).opBoxCount, 1u);
}

TEST(LayoutDominatorTree, LaidOutParentsSitAboveChildren) {
    ir::Model m = examples::find("branchy_dominators")->build();
    auto tree = DominatorTree::build(m.graph, true);
    auto dg = buildDominatorTreeDisplay(m.graph, tree);
    auto result = layout::layoutGraph(layout::toLayoutRequest(dg, {}));
    ASSERT_EQ(result.boxes.size(), dg.nodes.size());
    std::map<uint32_t, layout::Rect> rect;
    for (const auto& b : result.boxes) rect[b.key] = b.rect;
    for (const auto& e : dg.edges) EXPECT_LT(rect[e.from].bottom(), rect[e.to].y);
}
