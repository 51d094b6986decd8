// core/layout without a GUI: coordinate flip, Graphviz spline text and Bézier conversion, bounding
// boxes, the display graph (folding, categories) and a real dot layout of small graphs.
#include <gtest/gtest.h>

#include <thread>

#include "examples/Examples.h"
#include "examples/Builder.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"

using namespace passlens;
using namespace passlens::layout;

TEST(LayoutMath, FlipYMirrorsAroundTheTop) {
    EXPECT_EQ(flipY({10, 90}, 100), (Point{10, 10}));
    EXPECT_EQ(flipY({0, 0}, 100), (Point{0, 100}));
    EXPECT_EQ(flipY({5, 100}, 100), (Point{5, 0}));
}

TEST(LayoutMath, ParsesEdgePosWithArrowEnd) {
    auto e = parseEdgePos("e,27,18.1 27,71.7 27,63.98 27,54.71 27,46.11", 100);
    ASSERT_TRUE(e);
    ASSERT_EQ(e->points.size(), 4u);
    EXPECT_DOUBLE_EQ(e->points[0].x, 27);
    EXPECT_DOUBLE_EQ(e->points[0].y, 100 - 71.7);
    EXPECT_DOUBLE_EQ(e->points[3].y, 100 - 46.11);
    ASSERT_TRUE(e->arrowTip);
    EXPECT_DOUBLE_EQ(e->arrowTip->y, 100 - 18.1);
    // Flipped: the path now runs downwards (y grows) towards the arrow tip.
    EXPECT_LT(e->points[0].y, e->points[3].y);
    EXPECT_LT(e->points[3].y, e->arrowTip->y);
}

TEST(LayoutMath, ParsesEdgePosWithStartMarkerAndLineContinuations) {
    auto e = parseEdgePos("s,1,2 e,9,9 0,0 1,1\\\n 2,2 3,3 4,4 5,5 6,6", 10);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->points.size(), 7u);
    EXPECT_EQ(e->points[6], (Point{6, 4}));
}

TEST(LayoutMath, RejectsMalformedEdgePos) {
    EXPECT_FALSE(parseEdgePos("", 10));
    EXPECT_FALSE(parseEdgePos("0,0 1,1 2,2", 10));         // not 3n+1 points
    EXPECT_FALSE(parseEdgePos("0,0 1,1 2,2 x,3", 10));     // garbage number
    EXPECT_FALSE(parseEdgePos("e,1 0,0 1,1 2,2 3,3", 10)); // arrow point without y
}

TEST(LayoutMath, ParsesBoundingBox) {
    auto bb = parseBoundingBox("0,0,254.5,332");
    ASSERT_TRUE(bb);
    EXPECT_DOUBLE_EQ(bb->width, 254.5);
    EXPECT_DOUBLE_EQ(bb->height, 332);
    EXPECT_FALSE(parseBoundingBox("0,0,10"));
    EXPECT_FALSE(parseBoundingBox("10,0,0,5"));
}

TEST(LayoutMath, UnionBoundsCoversBoxesPathsAndArrows) {
    std::vector<BoxPlacement> boxes = {{1, Rect{10, 10, 20, 10}}, {2, Rect{50, 80, 30, 10}}};
    EdgePath e;
    e.points = {{20, 20}, {-5, 40}, {60, 60}, {65, 70}};
    e.arrowTip = Point{65, 95};
    Rect r = unionBounds(boxes, {e});
    EXPECT_DOUBLE_EQ(r.x, -5);
    EXPECT_DOUBLE_EQ(r.y, 10);
    EXPECT_DOUBLE_EQ(r.right(), 80);
    EXPECT_DOUBLE_EQ(r.bottom(), 95);
    EXPECT_DOUBLE_EQ(unionBounds({}, {}).width, 0);
}

TEST(LayoutMath, PathMidpointIsHalfwayAlongThePolygon) {
    Point m = pathMidpoint({{0, 0}, {0, 10}, {10, 10}});
    EXPECT_DOUBLE_EQ(m.x, 0);
    EXPECT_DOUBLE_EQ(m.y, 10);
    Point m2 = pathMidpoint({{0, 0}, {4, 0}});
    EXPECT_DOUBLE_EQ(m2.x, 2);
}

TEST(Layout, DotPlacesAChainTopToBottomInsideTheBounds) {
    LayoutRequest req;
    for (uint32_t i = 0; i < 4; ++i) req.boxes.push_back({i, 80, 30, {}, {}, {}});
    for (uint32_t i = 0; i + 1 < 4; ++i) req.edges.push_back({i, i + 1, {}});
    req.edges.push_back({0, 3, {}});  // a skip edge
    LayoutResult r = layoutGraph(req);
    ASSERT_EQ(r.boxes.size(), 4u);
    ASSERT_EQ(r.edges.size(), 4u);
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(r.boxes[i].key, i);
        EXPECT_NEAR(r.boxes[i].rect.width, 80, 0.5);
        EXPECT_NEAR(r.boxes[i].rect.height, 30, 0.5);
        EXPECT_GE(r.boxes[i].rect.x, r.bounds.x - 1e-6);
        EXPECT_LE(r.boxes[i].rect.bottom(), r.bounds.bottom() + 1e-6);
        if (i) {
            EXPECT_GT(r.boxes[i].rect.y, r.boxes[i - 1].rect.bottom());  // y down: rank i below rank i-1
        }
    }
    for (const auto& e : r.edges) {
        ASSERT_GE(e.points.size(), 4u);
        EXPECT_EQ((e.points.size() - 1) % 3, 0u);
        ASSERT_TRUE(e.arrowTip);
        // Each edge starts at its tail box and its arrow touches the head box's top.
        const auto& tail = r.boxes[e.from].rect;
        const auto& head = r.boxes[e.to].rect;
        EXPECT_NEAR(e.points.front().y, tail.bottom(), 2.0);
        EXPECT_NEAR(e.arrowTip->y, head.y, 2.0);
    }
}

TEST(Layout, RejectsEdgesToUnknownBoxes) {
    LayoutRequest req;
    req.boxes.push_back({1, 10, 10, {}, {}, {}});
    req.edges.push_back({1, 7, {}});
    EXPECT_THROW(layoutGraph(req), std::exception);
}

TEST(Layout, ConcurrentLayoutsAreSerializedAndAgree) {
    const auto& ex = *examples::find("transformer_block");
    ir::Model m = ex.build();
    auto req = toLayoutRequest(buildDisplayGraph(m.graph), nullptr);
    LayoutResult a, b;
    std::thread t1([&] { a = layoutGraph(req); });
    std::thread t2([&] { b = layoutGraph(req); });
    t1.join();
    t2.join();
    ASSERT_EQ(a.boxes.size(), b.boxes.size());
    for (size_t i = 0; i < a.boxes.size(); ++i) EXPECT_DOUBLE_EQ(a.boxes[i].rect.x, b.boxes[i].rect.x);
}

TEST(DisplayGraph, FoldsInitializersIntoConsumerLines) {
    ir::Model m = examples::find("conv_bn_relu")->build();
    DisplayGraph folded = buildDisplayGraph(m.graph, {true, 17});
    EXPECT_EQ(folded.opBoxCount, 3u);
    EXPECT_EQ(folded.nodes.size(), 5u);  // image, conv, bn, relu, output
    const DisplayNode* conv = nullptr;
    for (const auto& n : folded.nodes)
        if (n.title == "Conv") conv = &n;
    ASSERT_NE(conv, nullptr);
    ASSERT_EQ(conv->foldedLines.size(), 2u);
    EXPECT_EQ(conv->foldedLines[0], "W ⟨8×3×3×3⟩");
    EXPECT_EQ(conv->foldedLines[1], "B ⟨8⟩");
    EXPECT_EQ(conv->category, OpCategory::Convolution);
    EXPECT_EQ(folded.edges.size(), 4u);
    for (const auto& e : folded.edges) EXPECT_NE(e.label.find("float32"), std::string::npos);

    DisplayGraph open = buildDisplayGraph(m.graph, {false, 17});
    EXPECT_EQ(open.nodes.size(), 5u + 6u);  // six initializers
    EXPECT_EQ(open.edges.size(), 4u + 6u);
}

TEST(DisplayGraph, FoldsConstantNodesAndHidesUnreadOnes) {
    ir::GraphBuilder b("constants");
    auto x = b.input("x", ir::DataType::Float, {2});
    auto c = b.op("Constant", {}, {ir::Attribute::makeTensor("value", ir::floatTensor({2}, {1, 2}))}, "c");
    b.op("Constant", {}, {ir::Attribute::makeTensor("value", ir::floatTensor({1}, {1}))}, "unused");
    auto y = b.op("Add", {x, c}, {}, "add");
    b.output(y);
    ir::Model m = b.finish();
    DisplayGraph dg = buildDisplayGraph(m.graph, {true, 17});
    EXPECT_EQ(dg.foldedConstantNodes, 2u);
    EXPECT_EQ(dg.opBoxCount, 1u);  // add; the unread constant waits for DCE undrawn
    DisplayGraph open = buildDisplayGraph(m.graph, {false, 17});
    EXPECT_EQ(open.opBoxCount, 3u);
}

TEST(DisplayGraph, FoldsIdentitiesOfWeightsLikeConstants) {
    // torch.onnx writes an Identity per shared parameter; drawn as boxes they make a row of
    // weight copies with long edges into the model (Swin: 24 of them above the first stage).
    ir::GraphBuilder b("aliases");
    auto x = b.input("x", ir::DataType::Float, {2});
    auto w = b.constant("w", ir::floatTensor({2}, {1, 2}));
    auto alias = b.op("Identity", {w}, {}, "Identity_3");
    auto copy = b.op("Identity", {x}, {}, "copy_of_input");
    auto y = b.op("Add", {copy, alias}, {}, "add");
    b.output(y);
    ir::Model m = b.finish();
    DisplayGraph dg = buildDisplayGraph(m.graph, {true, 17});
    EXPECT_EQ(dg.foldedConstantNodes, 1u);
    EXPECT_EQ(dg.opBoxCount, 2u);  // the Identity of the input and the Add
    const DisplayNode* add = nullptr;
    for (const auto& n : dg.nodes)
        if (n.title == "Add") add = &n;
    ASSERT_NE(add, nullptr);
    ASSERT_EQ(add->foldedLines.size(), 1u);
    EXPECT_EQ(add->foldedLines[0], "B ⟨2⟩");
    DisplayGraph open = buildDisplayGraph(m.graph, {false, 17});
    EXPECT_EQ(open.opBoxCount, 3u);
    EXPECT_EQ(open.foldedConstantNodes, 0u);
}

TEST(DisplayGraph, ACapturesBoxShowsItsDefinitionsType) {
    // Inside an If branch the captured value is an input box; it says where it comes from and,
    // once inference typed the definition, what it holds.
    ir::GraphBuilder b("captures");
    auto x = b.inputSymbolic("x", ir::DataType::Float, {ir::Dim::symbol("batch"), ir::Dim::of(4)});
    auto flag = b.input("flag", ir::DataType::Bool, {});
    auto r = b.op("Relu", {x}, {}, "r");
    auto branch = [&](const std::string& name) {
        auto g = std::make_shared<ir::Graph>();
        g->name = name;
        ir::ValueId in = g->addOuterScopeValue(b.graph().value(r).name);
        ir::ValueId out = g->addValue(name + "_out");
        g->addNode("Identity", {in}, {out});
        g->markOutput(out);
        return g;
    };
    auto thenG = branch("then"), elseG = branch("else");
    b.output(b.op("If", {flag}, {ir::Attribute::makeGraph("then_branch", thenG), ir::Attribute::makeGraph("else_branch", elseG)}));
    ir::Model m = b.finish();
    DisplayGraph dg = buildDisplayGraph(*thenG, {true, 17});
    const DisplayNode* capture = nullptr;
    for (const auto& n : dg.nodes)
        if (n.kind == DisplayNode::Kind::Input) capture = &n;
    ASSERT_NE(capture, nullptr);
    EXPECT_EQ(capture->subtitle, "outer scope · batch×4 float32");
}

TEST(DisplayGraph, CategoriesAndLabels) {
    EXPECT_EQ(categorize("Relu"), OpCategory::Activation);
    EXPECT_EQ(categorize("ReduceMean"), OpCategory::Reduction);
    EXPECT_EQ(categorize("MatMul"), OpCategory::MatMul);
    EXPECT_EQ(categorize("If"), OpCategory::ControlFlow);
    EXPECT_EQ(categorize("MyCustomOp"), OpCategory::Other);
    ir::TypeInfo t = ir::TypeInfo::tensor(ir::DataType::Float, ir::Shape{{ir::Dim::symbol("N"), ir::Dim::of(3), ir::Dim{}}});
    EXPECT_EQ(shapeText(t), "N×3×?");
    EXPECT_EQ(edgeLabel(t), "N×3×? float32");
    EXPECT_EQ(edgeLabel(ir::TypeInfo::tensor(ir::DataType::Int64)), "int64");
    // The shape engine's expressions: short ones as they are, long ones by the dims they use.
    ir::TypeInfo sym = ir::TypeInfo::tensor(
        ir::DataType::Float, ir::Shape{{ir::Dim::symbol("batch"), ir::Dim::symbol("floor(height/4)"),
                                        ir::Dim::symbol("floor(width/4) + Mod(-Mod(floor(width/4), 4), 4)"),
                                        ir::Dim::symbol("Max(floor(height/4), Min(seq_len.x, 2*floor(height/4) - 1))")}});
    EXPECT_EQ(shapeText(sym), "batch×floor(height/4)×f(width)×f(height,seq_len.x)");
}
