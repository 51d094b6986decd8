// Unfolded constants: a constant read by several nodes is drawn once per reader (each copy keyed
// so selection resolves to the same value); folded mode draws no constant boxes at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "TestSupport.h"
#include "examples/Builder.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;
using layout::DisplayGraph;
using layout::DisplayNode;

namespace {

layout::DisplayOptions unfolded(bool copies = true) {
    layout::DisplayOptions o;
    o.foldConstants = false;
    o.copySharedConstants = copies;
    return o;
}

/// x → Mul(·, c) → Mul(·, c) → … (n Muls), every Mul reading the same scalar constant c. With
/// `constantNode`, c is the output of a Constant node instead of an initializer.
struct SharedScalar {
    ir::Model model;
    ir::ValueId c = ir::kNone;
    std::vector<ir::NodeId> muls;
};

SharedScalar sharedScalarChain(int n, bool constantNode) {
    ir::GraphBuilder b("shared_scalar");
    SharedScalar s;
    ir::ValueId y = b.input("x", ir::DataType::Float, {1, 4});
    s.c = constantNode ? b.op("Constant", {}, {ir::Attribute::makeTensor("value", ir::floatTensor({}, {2.f}))}, "c")
                       : b.scalar("c", 2.f);
    for (int i = 0; i < n; ++i) {
        y = b.op("Mul", {y, s.c});
        s.muls.push_back(b.graph().value(y).producer);
    }
    b.output(y);
    s.model = b.finish();
    return s;
}

std::vector<const DisplayNode*> boxesShowing(const DisplayGraph& dg, ir::ValueId v) {
    std::vector<const DisplayNode*> out;
    for (const auto& n : dg.nodes)
        if (n.kind == DisplayNode::Kind::Constant && n.value == v) out.push_back(&n);
    return out;
}

size_t indexOf(const DisplayGraph& dg, uint32_t key) {
    for (size_t i = 0; i < dg.nodes.size(); ++i)
        if (dg.nodes[i].key == key) return i;
    ADD_FAILURE() << "no box with key " << key;
    return dg.nodes.size();
}

std::map<uint32_t, size_t> outDegree(const DisplayGraph& dg) {
    std::map<uint32_t, size_t> d;
    for (const auto& e : dg.edges) ++d[e.from];
    return d;
}

void expectUniqueKeys(const DisplayGraph& dg) {
    std::set<uint32_t> keys;
    for (const auto& n : dg.nodes) EXPECT_TRUE(keys.insert(n.key).second) << "duplicate key " << n.key;
}

}  // namespace

TEST(LayoutUnfold, InitializerReadByNNodesGivesNBoxesUnfoldedAndNoneFolded) {
    constexpr int kReaders = 5;
    auto s = sharedScalarChain(kReaders, false);
    const auto& g = s.model.graph;

    DisplayGraph dg = layout::buildDisplayGraph(g, unfolded());
    auto boxes = boxesShowing(dg, s.c);
    ASSERT_EQ(boxes.size(), size_t(kReaders));
    EXPECT_EQ(dg.constantCopies, size_t(kReaders - 1));
    expectUniqueKeys(dg);
    const uint32_t original = layout::kConstantKeyTag | s.c;
    size_t originals = 0;
    for (const DisplayNode* b : boxes) {
        EXPECT_EQ(b->title, "c");
        EXPECT_EQ(b->subtitle, "⟨scalar⟩");
        if (b->key == original) ++originals;
        else {
            EXPECT_EQ(b->copyOf, original);
        }
        EXPECT_EQ(dg.valueOfKey(b->key), s.c);  // what GraphView emits when the box is selected
    }
    EXPECT_EQ(originals, 1u);

    // Every Mul reads c from its own box: one edge per constant box, each to a different Mul.
    std::set<uint32_t> readers;
    for (const auto& e : dg.edges)
        if (e.value == s.c) {
            EXPECT_EQ(dg.valueOfKey(e.from), s.c);
            readers.insert(e.to);
        }
    EXPECT_EQ(readers, std::set<uint32_t>(s.muls.begin(), s.muls.end()));
    for (const DisplayNode* b : boxes) EXPECT_EQ(outDegree(dg)[b->key], 1u) << b->key;
    // x→Mul, Mul→Mul (n−1), Mul→output, and n constant edges.
    EXPECT_EQ(dg.edges.size(), size_t(1 + (kReaders - 1) + 1 + kReaders));

    // Folded: no constant boxes; every Mul carries the scalar as a line.
    DisplayGraph folded = layout::buildDisplayGraph(g);
    EXPECT_TRUE(boxesShowing(folded, s.c).empty());
    EXPECT_EQ(folded.constantCopies, 0u);
    EXPECT_EQ(folded.edges.size(), size_t(1 + (kReaders - 1) + 1));
    for (const auto& n : folded.nodes)
        if (n.kind == DisplayNode::Kind::Op) {
            EXPECT_EQ(n.foldedLines, std::vector<std::string>{"B ⟨scalar⟩"});
        }
}

TEST(LayoutUnfold, SharedBoxWhenCopiesAreOff) {
    auto s = sharedScalarChain(4, false);
    DisplayGraph shared = layout::buildDisplayGraph(s.model.graph, unfolded(false));
    DisplayGraph copied = layout::buildDisplayGraph(s.model.graph, unfolded(true));
    ASSERT_EQ(boxesShowing(shared, s.c).size(), 1u);
    EXPECT_EQ(outDegree(shared)[layout::kConstantKeyTag | s.c], 4u);
    EXPECT_EQ(copied.nodes.size(), shared.nodes.size() + 3);
    EXPECT_EQ(copied.edges.size(), shared.edges.size());  // edges are redirected, never added
}

TEST(LayoutUnfold, ConstantNodeKeepsItsBoxForTheFirstReaderAndCopiesTheRest) {
    constexpr int kReaders = 3;
    auto s = sharedScalarChain(kReaders, true);
    const auto& g = s.model.graph;
    const ir::NodeId constant = g.value(s.c).producer;

    DisplayGraph dg = layout::buildDisplayGraph(g, unfolded());
    expectUniqueKeys(dg);
    // The Constant operator box stays (selection, styles and search find it by NodeId).
    ASSERT_LT(indexOf(dg, constant), dg.nodes.size());
    EXPECT_EQ(outDegree(dg)[constant], 1u);
    auto copies = boxesShowing(dg, s.c);
    ASSERT_EQ(copies.size(), size_t(kReaders - 1));
    for (const DisplayNode* c : copies) {
        EXPECT_EQ(c->copyOf, constant);
        EXPECT_EQ(c->subtitle, "⟨scalar⟩");
        EXPECT_EQ(dg.valueOfKey(c->key), s.c);
    }
    EXPECT_EQ(dg.valueOfKey(constant), ir::kNone);  // an operator box is not a value
    // The first Mul reads the Constant node itself, the others their copies.
    for (const auto& e : dg.edges)
        if (e.value == s.c) {
            EXPECT_EQ(e.from == constant, e.to == s.muls.front()) << e.to;
        }

    DisplayGraph folded = layout::buildDisplayGraph(g);
    EXPECT_EQ(folded.foldedConstantNodes, 1u);
    EXPECT_TRUE(boxesShowing(folded, s.c).empty());
    EXPECT_EQ(folded.nodes.size(), size_t(1 + kReaders + 1));  // x, the Muls, the output
}

TEST(LayoutUnfold, CopiesAreListedJustBeforeTheirReader) {
    auto s = sharedScalarChain(4, false);
    DisplayGraph dg = layout::buildDisplayGraph(s.model.graph, unfolded());
    for (const auto& e : dg.edges)
        if (e.value == s.c && dg.nodes[indexOf(dg, e.from)].copyOf) {
            EXPECT_EQ(indexOf(dg, e.from) + 1, indexOf(dg, e.to));
        }
}

TEST(LayoutUnfold, SingleReaderAndGraphOutputConstantsAreNotCopied) {
    ir::GraphBuilder b("negatives");
    ir::ValueId x = b.input("x", ir::DataType::Float, {1, 4});
    ir::ValueId c = b.scalar("c", 3.f);
    ir::ValueId k = b.scalar("k", 5.f);
    ir::ValueId sq = b.op("Mul", {c, c});                  // one reader, two slots
    ir::ValueId y = b.op("Add", {b.op("Add", {x, sq}), k});
    b.output(y);
    b.output(b.op("Mul", {y, k}));
    b.output(k);                                          // k is also a graph output
    auto m = b.finish();
    DisplayGraph dg = layout::buildDisplayGraph(m.graph, unfolded());
    EXPECT_EQ(dg.constantCopies, 0u);
    EXPECT_EQ(boxesShowing(dg, c).size(), 1u);
    EXPECT_EQ(boxesShowing(dg, k).size(), 1u);
    EXPECT_EQ(outDegree(dg)[layout::kConstantKeyTag | k], 3u);  // two readers and the output box
}

TEST(LayoutUnfold, LayoutPlacesEveryCopy) {
    auto s = sharedScalarChain(6, false);
    DisplayGraph dg = layout::buildDisplayGraph(s.model.graph, unfolded());
    auto result = layout::layoutGraph(layout::toLayoutRequest(dg, nullptr));
    ASSERT_EQ(result.boxes.size(), dg.nodes.size());
    ASSERT_EQ(result.edges.size(), dg.edges.size());
    for (size_t i = 0; i < dg.nodes.size(); ++i) {
        EXPECT_EQ(result.boxes[i].key, dg.nodes[i].key);
        EXPECT_TRUE(result.bounds.contains(result.boxes[i].center()));
    }
    // A copy sits right above its reader: exactly one rank up, not at the top of the drawing.
    for (const auto& e : dg.edges) {
        const size_t from = indexOf(dg, e.from);
        if (!dg.nodes[from].copyOf) continue;
        const auto& reader = result.boxes[indexOf(dg, e.to)].rect;
        const auto& copy = result.boxes[from].rect;
        EXPECT_LT(copy.bottom(), reader.y);
        EXPECT_LT(reader.y - copy.bottom(), 80.0);
    }
}

TEST(LayoutUnfold, RecAfterAllPipelineHasNoSharedConstantBoxes) {
    auto model = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    passes::PassManager pm;
    pm.addLevel(passes::Level::All);
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    pm.run(model, po);
    layout::DisplayOptions o = unfolded();
    o.opset = model.opsetFor("");
    DisplayGraph shared = layout::buildDisplayGraph(model.graph, unfolded(false));
    DisplayGraph dg = layout::buildDisplayGraph(model.graph, o);
    ASSERT_GT(dg.constantCopies, 0u);  // the optimized rec model does share constants
    EXPECT_EQ(dg.nodes.size(), shared.nodes.size() + dg.constantCopies);
    EXPECT_EQ(dg.edges.size(), shared.edges.size());
    expectUniqueKeys(dg);
    for (const auto& [key, degree] : outDegree(dg)) {
        if ((key & layout::kKeyTagMask) != layout::kConstantKeyTag) continue;
        const ir::ValueId v = dg.valueOfKey(key);
        if (!model.graph.value(v).isGraphOutput) {
            EXPECT_EQ(degree, 1u) << model.graph.value(v).name;
        }
    }
}

TEST(LayoutUnfold, RecUnfoldedDrawingStaysNarrow) {
    // Before per-reader copies and weighted data edges the unfolded drawing was ~18× as wide as the
    // folded one (a sideways staircase); now it is about twice as wide (constants sit beside readers).
    auto model = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    passes::PassManager pm;
    pm.addLevel(passes::Level::All);
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    pm.run(model, po);
    auto width = [&](bool fold) {
        layout::DisplayOptions o;
        o.foldConstants = fold;
        o.opset = model.opsetFor("");
        return layout::layoutGraph(layout::toLayoutRequest(layout::buildDisplayGraph(model.graph, o), nullptr))
            .bounds.width;
    };
    const double folded = width(true), unfoldedWidth = width(false);
    EXPECT_LT(unfoldedWidth, 4 * folded) << unfoldedWidth << " vs folded " << folded;
}

TEST(LayoutUnfold, CliRendersRecUnfoldedAfterAll) {
    const std::string dir = test::tempDir("unfold_rec");
    auto r = test::runCli({"render", test::realModel("ch_PP-OCRv4_rec_infer.onnx"), "-o", dir + "/rec.dot",
                           "--no-fold", "--after", "transpose"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("boxes"), std::string::npos) << r.out;
}

TEST(LayoutUnfold, DataEdgesWeighMoreOnlyWhenConstantsAreBoxes) {
    auto s = sharedScalarChain(3, false);
    DisplayGraph dg = layout::buildDisplayGraph(s.model.graph, unfolded());
    auto req = layout::toLayoutRequest(dg, nullptr);
    ASSERT_EQ(req.edges.size(), dg.edges.size());
    for (size_t i = 0; i < req.edges.size(); ++i)
        EXPECT_EQ(req.edges[i].weight, dg.edges[i].value == s.c ? 1 : layout::kDataEdgeWeight) << i;
    ASSERT_TRUE(req.options.nslimit);
    EXPECT_GE(*req.options.nslimit, layout::kConstantBoxesNslimit);

    // Folded: the request is what it always was.
    auto folded = layout::toLayoutRequest(layout::buildDisplayGraph(s.model.graph), nullptr);
    for (const auto& e : folded.edges) EXPECT_EQ(e.weight, 1);
    EXPECT_EQ(folded.options.nslimit, layout::LayoutOptions{}.nslimit);
}

TEST(LayoutUnfold, ReadersOfConstantsStayInOneColumn) {
    // Without weighted data edges each Mul sits between its input and its constant box and the
    // chain drifts sideways by a box per step; with them the Muls line up.
    constexpr int kReaders = 12;
    auto s = sharedScalarChain(kReaders, false);
    DisplayGraph dg = layout::buildDisplayGraph(s.model.graph, unfolded());
    auto result = layout::layoutGraph(layout::toLayoutRequest(dg, nullptr));
    double lo = 1e9, hi = -1e9;
    for (ir::NodeId m : s.muls) {
        const double x = result.boxes[indexOf(dg, m)].center().x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    EXPECT_LT(hi - lo, 10.0) << "the Mul chain drifts sideways";

    auto drift = layout::toLayoutRequest(dg, nullptr);
    for (auto& e : drift.edges) e.weight = 1;
    drift.options.nslimit = layout::LayoutOptions{}.nslimit;
    auto drifted = layout::layoutGraph(drift);
    lo = 1e9, hi = -1e9;
    for (ir::NodeId m : s.muls) {
        const double x = drifted.boxes[indexOf(dg, m)].center().x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
    }
    EXPECT_GT(hi - lo, 100.0) << "the negative control no longer drifts; the column test proves nothing";
}
