// The layout that cannot fall over (large stack, box cap, layered fallback) and the hierarchical
// layout: collapsed groups as boxes, expanded groups as frames around exactly their members,
// aggregated edges, and the per-group cache.
#include <gtest/gtest.h>

#include <set>

#include "HierarchyModels.h"
#include "layout/HierarchicalLayout.h"
#include "layout/LargeStack.h"
#include "layout/LayeredLayout.h"

using namespace passlens;
using namespace passlens::layout;
using passlens::test::LayerNaming;

namespace {

int recurse(int depth) {
    volatile char frame[1024];
    frame[0] = char(depth);
    return depth == 0 ? frame[0] : recurse(depth - 1) + (frame[0] & 1);
}

LayoutRequest chainRequest(uint32_t n) {
    LayoutRequest req;
    for (uint32_t i = 0; i < n; ++i) req.boxes.push_back({i, 60, 24, {}, {}, {}});
    for (uint32_t i = 0; i + 1 < n; ++i) req.edges.push_back({i, i + 1, {}});
    return req;
}

}  // namespace

TEST(LargeStack, DeepRecursionRunsAndErrorsComeBack) {
    int result = -1;
    // ~40 MB of frames: five times a default thread stack.
    runOnLargeStack([&] { result = recurse(40000); });
    EXPECT_GE(result, 0);
    EXPECT_THROW(runOnLargeStack([] { throw std::runtime_error("boom"); }), std::runtime_error);
}

TEST(LayeredLayout, LongestPathLayers) {
    // 0 → 1 → 3, 0 → 2 → 3, 0 → 3, 4 alone
    auto layers = longestPathLayers(5, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}});
    EXPECT_EQ(layers, (std::vector<int>{0, 1, 1, 2, 0}));
}

TEST(LayeredLayout, CyclesDoNotHang) {
    auto layers = longestPathLayers(3, {{0, 1}, {1, 2}, {2, 0}});
    ASSERT_EQ(layers.size(), 3u);
    EXPECT_EQ(std::set<int>(layers.begin(), layers.end()).size(), 3u);
}

TEST(LayeredLayout, BarycenterUncrossesTwoChains) {
    // Layer 0: a(0), b(1); layer 1 listed crossed: y(2) reads b, x(3) reads a.
    auto order = orderLayers({0, 0, 1, 1}, {{0, 3}, {1, 2}});
    ASSERT_EQ(order.size(), 2u);
    EXPECT_EQ(order[1], (std::vector<size_t>{3, 2}));
}

TEST(LayeredLayout, PlacesLayersTopDownWithoutOverlap) {
    LayoutRequest req;
    for (uint32_t i = 0; i < 4; ++i) req.boxes.push_back({10 + i, 80, 30, {}, {}, {}});
    req.edges = {{10, 11, {}}, {10, 12, {}}, {11, 13, {}}, {12, 13, {}}};
    LayoutResult r = layeredLayout(req);
    ASSERT_EQ(r.boxes.size(), 4u);
    EXPECT_EQ(r.boxes[2].key, 12u);
    EXPECT_GT(r.boxes[1].rect.y, r.boxes[0].rect.bottom());
    EXPECT_DOUBLE_EQ(r.boxes[1].rect.y, r.boxes[2].rect.y);
    EXPECT_TRUE(r.boxes[1].rect.right() <= r.boxes[2].rect.x || r.boxes[2].rect.right() <= r.boxes[1].rect.x);
    for (const auto& e : r.edges) {
        ASSERT_EQ(e.points.size(), 4u);
        ASSERT_TRUE(e.arrowTip);
        EXPECT_GT(e.arrowTip->y, e.points.front().y);
    }
    EXPECT_DOUBLE_EQ(r.bounds.x, 0);
    EXPECT_GE(r.bounds.bottom(), r.boxes[3].rect.bottom());
}

TEST(LayoutOrFallBack, TooManyBoxesUseTheLayeredPlacement) {
    LayoutResult big = layoutOrFallBack(chainRequest(uint32_t(kMaxGraphvizBoxes + 1)));
    EXPECT_FALSE(big.fallbackReason.empty());
    EXPECT_EQ(big.boxes.size(), kMaxGraphvizBoxes + 1);
    LayoutResult small = layoutOrFallBack(chainRequest(5));
    EXPECT_TRUE(small.fallbackReason.empty());
}

TEST(LayoutOrFallBack, TuningOnlyFillsUnsetKnobs) {
    LayoutOptions o;
    o.mclimit = 3.0;
    LayoutOptions t = tunedOptions(o, 1000);
    EXPECT_EQ(t.mclimit, 3.0);
    EXPECT_TRUE(t.searchsize);
    EXPECT_FALSE(tunedOptions({}, 50).mclimit);
}

namespace {

struct Drawn {
    ir::Model model;
    std::shared_ptr<hierarchy::Hierarchy> h;
    std::unique_ptr<HierarchicalLayouter> layouter;
};

Drawn drawable(int layers, LayerNaming naming) {
    Drawn d{test::layeredModel(layers, naming), nullptr, nullptr};
    d.h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(d.model.graph));
    d.layouter = std::make_unique<HierarchicalLayouter>(d.h, buildDisplayGraph(d.model.graph), nullptr);
    return d;
}

std::set<ir::NodeId> opBoxes(const HierarchicalDrawing& dr) {
    std::set<ir::NodeId> out;
    for (const auto& n : dr.display.nodes)
        if (n.kind == DisplayNode::Kind::Op) out.insert(n.node);
    return out;
}

}  // namespace

TEST(HierarchicalLayout, TopLevelIsOneBoxPerGroup) {
    Drawn d = drawable(12, LayerNaming::Scoped);
    HierarchicalDrawing top = d.layouter->draw(expansionToDepth(*d.h, 0));
    // x, the encoder box, the output.
    ASSERT_EQ(top.display.nodes.size(), 3u);
    std::vector<std::string> groups;
    for (const auto& n : top.display.nodes)
        if (n.kind == DisplayNode::Kind::Group) groups.push_back(n.title);
    EXPECT_EQ(groups, std::vector<std::string>{"encoder"});
    EXPECT_EQ(top.display.nodes.size(), top.layout.boxes.size());
    EXPECT_EQ(top.display.edges.size(), top.layout.edges.size());
    EXPECT_TRUE(top.frames.empty());
    EXPECT_EQ(visibleBoxes(*d.h, d.layouter->full(), top.expanded), 3u);
}

TEST(HierarchicalLayout, ExpandingALayerShowsExactlyItsMembers) {
    Drawn d = drawable(12, LayerNaming::Scoped);
    const auto layer3 = *d.h->findPath("encoder/layer.3");
    Expansion e = withPathTo(*d.h, expansionToDepth(*d.h, 0), layer3);
    e.insert(*d.h->findPath("encoder/layer.3/mlp"));
    e.insert(*d.h->findPath("encoder/layer.3/norm"));
    HierarchicalDrawing dr = d.layouter->draw(e);
    auto members = d.h->membersOf(layer3);
    EXPECT_EQ(opBoxes(dr), std::set<ir::NodeId>(members.begin(), members.end()));
    size_t groupBoxes = 0;
    for (const auto& n : dr.display.nodes) groupBoxes += n.kind == DisplayNode::Kind::Group;
    EXPECT_EQ(groupBoxes, 11u);  // the other layers
    // Frames: encoder, layer.3, mlp, norm; every member box inside the layer's frame.
    ASSERT_EQ(dr.frames.size(), 4u);
    const GroupFrame* frame = nullptr;
    for (const auto& f : dr.frames)
        if (f.group == layer3) frame = &f;
    ASSERT_NE(frame, nullptr);
    for (size_t i = 0; i < dr.display.nodes.size(); ++i)
        if (dr.display.nodes[i].kind == DisplayNode::Kind::Op) {
            const Rect& r = dr.layout.boxes[i].rect;
            EXPECT_TRUE(frame->rect.contains({r.x, r.y}) && frame->rect.contains({r.right(), r.bottom()}));
        }
}

TEST(HierarchicalLayout, EdgesBetweenGroupsAreAggregated) {
    Drawn d = drawable(6, LayerNaming::Scoped);
    HierarchicalDrawing dr = d.layouter->draw(expansionToDepth(*d.h, 1));
    // Layer k+1 reads layer k's output twice (MatMul and the residual Add): one edge, count 2.
    bool found = false;
    for (const auto& e : dr.display.edges)
        if (isGroupKey(e.from) && isGroupKey(e.to)) {
            EXPECT_EQ(e.label.rfind("×2", 0), 0u) << e.label;
            found = true;
        }
    EXPECT_TRUE(found);
}

TEST(HierarchicalLayout, CachedGroupsAreNotLaidOutAgain) {
    Drawn d = drawable(12, LayerNaming::Scoped);
    Expansion e = expansionToDepth(*d.h, 1);
    HierarchicalDrawing first = d.layouter->draw(e);
    EXPECT_EQ(first.groupLayouts, 2u);  // root, encoder
    HierarchicalDrawing again = d.layouter->draw(e);
    EXPECT_EQ(again.groupLayouts, 0u);
    e.insert(*d.h->findPath("encoder/layer.5"));
    HierarchicalDrawing expanded = d.layouter->draw(e);
    EXPECT_EQ(expanded.groupLayouts, 3u);  // layer.5, and encoder and root around it
    EXPECT_EQ(expanded.layout.boxes.size(), expanded.display.nodes.size());
}

TEST(HierarchicalLayout, CancelledDrawThrows) {
    Drawn d = drawable(4, LayerNaming::Scoped);
    std::atomic<bool> cancel{true};
    EXPECT_THROW(d.layouter->draw(expansionToDepth(*d.h, 1), &cancel), LayoutCancelled);
}

TEST(HierarchicalLayout, BudgetPicksTheDeepestLevelThatFits) {
    Drawn d = drawable(12, LayerNaming::Scoped);
    Expansion e = expansionWithinBudget(*d.h, d.layouter->full(), 40);
    EXPECT_LE(visibleBoxes(*d.h, d.layouter->full(), e), 40u);
    EXPECT_TRUE(e.count(*d.h->findPath("encoder")));
}

TEST(HierarchicalLayout, UnchangedGroupsOfAnotherGraphReuseTheirPlacement) {
    // Two layouters over equal graphs (a pass step that changed nothing in these groups): the
    // second places nothing itself.
    Drawn a = drawable(9, LayerNaming::Scoped);
    Drawn b = drawable(9, LayerNaming::Scoped);
    const Expansion e = withPathTo(*a.h, expansionToDepth(*a.h, 1), *a.h->findPath("encoder/layer.4/norm"));
    HierarchicalDrawing first = a.layouter->draw(e);
    HierarchicalDrawing second = b.layouter->draw(e);
    EXPECT_EQ(second.groupLayouts, first.groupLayouts);
    EXPECT_EQ(second.placements, 0u);
    ASSERT_EQ(first.layout.boxes.size(), second.layout.boxes.size());
    for (size_t i = 0; i < first.layout.boxes.size(); ++i)
        EXPECT_DOUBLE_EQ(first.layout.boxes[i].rect.y, second.layout.boxes[i].rect.y);
}
