// The dominator tree as a drawing: one box per node plus the virtual root, one edge per
// immediate-dominator link, and dot puts every parent above its children.
#include <gtest/gtest.h>

#include <map>

#include "analysis/Dominators.h"
#include "examples/Examples.h"
#include "HierarchyModels.h"
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

namespace {

/// The drawing's tree edges as child -> parent key.
std::map<uint32_t, uint32_t> parentOf(const layout::DisplayGraph& dg) {
    std::map<uint32_t, uint32_t> out;
    for (const auto& e : dg.edges) out[e.to] = e.from;
    return out;
}

}  // namespace

TEST(LayoutDominatorTree, LargeTreeIsDrawnAroundTheFocusWithinTheBoxLimit) {
    ir::Model m = test::layeredModel(40, test::LayerNaming::Scoped);  // 560 nodes
    const auto tree = DominatorTree::build(m.graph, true);
    const ir::NodeId focus = m.graph.nodeOrder()[m.graph.nodeCount() / 2];
    auto dg = buildDominatorTreeDisplay(m.graph, tree, {.maxBoxes = 50, .focus = focus});
    EXPECT_EQ(dg.opBoxCount, 50u);
    // The focus is drawn, under its own immediate post-dominator.
    const auto parent = parentOf(dg);
    ASSERT_TRUE(parent.count(focus));
    EXPECT_EQ(parent.at(focus), tree.idom(focus));
    // A connected piece: every drawn node hangs under a drawn node, the one top node under the
    // "⋯ levels" box (the middle of the model is far from the exit), that one under the root.
    size_t underElided = 0;
    for (const auto& n : dg.nodes) {
        if (n.kind != layout::DisplayNode::Kind::Op) continue;
        const uint32_t p = parent.at(n.key);
        if (p == layout::kElidedLevelsKey) { ++underElided; continue; }
        EXPECT_EQ(p, tree.idom(n.node)) << m.graph.node(n.node).name;
        EXPECT_TRUE(parent.count(p)) << "parent of " << m.graph.node(n.node).name << " is not drawn";
    }
    EXPECT_EQ(underElided, 1u);
    EXPECT_EQ(parent.at(layout::kElidedLevelsKey), kVirtualRootKey);
    // Children left out are counted on their parent's box.
    size_t below = 0;
    for (const auto& n : dg.nodes)
        for (const auto& line : n.foldedLines) below += std::stoul(line.substr(1));
    EXPECT_GT(below, 0u);
}

TEST(LayoutDominatorTree, WithoutFocusTheTopOfTheTreeIsDrawn) {
    ir::Model m = test::layeredModel(40, test::LayerNaming::Scoped);
    const auto tree = DominatorTree::build(m.graph, true);
    auto dg = buildDominatorTreeDisplay(m.graph, tree, {.maxBoxes = 30});
    EXPECT_EQ(dg.opBoxCount, 30u);
    for (const auto& n : dg.nodes) EXPECT_NE(n.key, layout::kElidedLevelsKey);
    // The exit's own children are all there.
    const auto parent = parentOf(dg);
    for (ir::NodeId c : tree.children(ir::kNone)) EXPECT_TRUE(parent.count(c));
}

TEST(LayoutDominatorTree, SmallTreeUnderTheLimitIsDrawnWhole) {
    ir::Model m = examples::find("branchy_dominators")->build();
    const auto tree = DominatorTree::build(m.graph, true);
    const auto whole = buildDominatorTreeDisplay(m.graph, tree);
    const auto limited = buildDominatorTreeDisplay(m.graph, tree, {.maxBoxes = whole.opBoxCount, .focus = m.graph.nodeOrder()[0]});
    EXPECT_EQ(limited.opBoxCount, whole.opBoxCount);
    EXPECT_EQ(limited.nodes.size(), whole.nodes.size());
}
