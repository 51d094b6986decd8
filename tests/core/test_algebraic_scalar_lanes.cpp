// scalar-lanes-to-vector: a 1-D Concat of Unsqueezed (or Reshaped-to-[1]) scalars that parallel
// elementwise chains compute from elements of one vector becomes the chain over the vector. Each
// case checks the op counts, the outputs under the interpreter at several bindings (exact: the
// same float ops run per element), the ONNX checker and a second run that changes nothing
// (runCheckedAtBindings); the refusals leave the graph's Concat in place.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

const std::vector<test::DimBindings> kSizes = {{{"h", 1}, {"w", 1}}, {{"h", 37}, {"w", 20}}, {{"h", 5}, {"w", 64}}};

passes::PipelineResult runAlgebraic(Model& m) { return test::runCheckedAtBindings(m, {"algebraic", "dce"}, kSizes); }

bool applied(const passes::PipelineResult& r, const std::string& rule) { return test::appliedInPipeline(r, rule); }

ValueId scalarIndex(GraphBuilder& b, const std::string& name, int64_t i) {
    return b.constant(name, makeTensorOf<int64_t>(DataType::Int64, {}, {i}));
}

/// Unsqueeze(s, [0]), its axes an initializer of its own (names are unique per graph).
ValueId unsqueezed(GraphBuilder& b, ValueId s) {
    return b.op("Unsqueeze", {s, b.ints("axis0_" + std::to_string(b.graph().nodeOrder().size()), {0})});
}

ValueId toFloat(GraphBuilder& b, ValueId v) { return b.op("Cast", {v}, {Attribute::makeInt("to", (int64_t)DataType::Float)}); }

/// torchvision's resize: image [3, h, w], scale = 64 / max(h, w), sizes [floor(h * scale),
/// floor(w * scale)] as int64, one scalar chain per dim. With `ratios` the box rescale
/// [w / floor_w, h / floor_h, w / floor_w, h / floor_h] (Reshape to [1] each) is a second output.
Model resizeSizes(bool ratios) {
    GraphBuilder b("resize_sizes");
    ValueId image = b.inputSymbolic("image", DataType::Float, {Dim::of(3), Dim::symbol("h"), Dim::symbol("w")});
    ValueId shape = b.op("Shape", {image});
    ValueId longest = b.op("ReduceMax", {b.op("Shape", {image}, {Attribute::makeInt("start", 1), Attribute::makeInt("end", 3)})},
                           {Attribute::makeInt("keepdims", 0)});
    ValueId scale = b.op("Mul", {b.op("Reciprocal", {toFloat(b, longest)}), b.scalar("size", 64.f)});
    ValueId h = toFloat(b, b.op("Gather", {shape, scalarIndex(b, "one", 1)}));
    ValueId w = toFloat(b, b.op("Gather", {shape, scalarIndex(b, "two", 2)}));
    ValueId fh = b.op("Floor", {b.op("Mul", {h, scale})});
    ValueId fw = b.op("Floor", {b.op("Mul", {w, scale})});
    ValueId sizes = b.op("Concat", {unsqueezed(b, fh), unsqueezed(b, fw)}, {Attribute::makeInt("axis", 0)});
    b.output(b.op("Cast", {sizes}, {Attribute::makeInt("to", (int64_t)DataType::Int64)}));
    if (ratios) {
        ValueId one = b.ints("one_elem", {1});
        ValueId rh = b.op("Reshape", {b.op("Div", {h, fh}), one});
        ValueId rw = b.op("Reshape", {b.op("Div", {w, fw}), one});
        b.output(b.op("Concat", {rw, rh, rw, rh}, {Attribute::makeInt("axis", 0)}));
    }
    return b.finish();
}

}  // namespace

TEST(ScalarLanes, ResizeSizesRunOnceOverTheShapeSlice) {
    Model m = resizeSizes(false);
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "scalar-lanes-to-vector"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Concat"), 0u);
    EXPECT_EQ(c.count("Unsqueeze"), 0u);
    EXPECT_EQ(c.count("Gather"), 0u) << "the dims are Shape(image, 1, 3)";
    EXPECT_EQ(c["Floor"], 1);
    EXPECT_EQ(c["Mul"], 2) << "the scale's and the sizes'";
    EXPECT_EQ(c["Shape"], 2) << "the scale's slice and the sizes' (cse merges them)";
}

TEST(ScalarLanes, RepeatedLanesAndChainValuesReadElsewhere) {
    // The ratios' lanes read h and floor_h, which the sizes' Concat also reads: after both
    // rewrites one Div over the vectors and one Gather in the order [w, h, w, h] remain.
    Model m = resizeSizes(true);
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "scalar-lanes-to-vector"));
    auto c = test::opCounts(m.graph);
    EXPECT_EQ(c.count("Concat"), 0u);
    EXPECT_EQ(c.count("Reshape"), 0u);
    EXPECT_EQ(c["Div"], 1);
    EXPECT_EQ(c["Floor"], 1);
    EXPECT_EQ(c["Gather"], 1) << "the [1, 0, 1, 0] order of the ratios";
    int orders = 0;
    for (NodeId id : m.graph.nodeOrder()) {
        const Node& n = m.graph.node(id);
        if (n.opType != "Gather") continue;
        const TensorPtr& t = m.graph.value(n.inputs[1]).initializer;
        ASSERT_TRUE(t);
        EXPECT_EQ(std::vector<int64_t>(t->as<int64_t>(), t->as<int64_t>() + t->elementCount()),
                  (std::vector<int64_t>{1, 0, 1, 0}));
        ++orders;
    }
    EXPECT_EQ(orders, 1);
}

TEST(ScalarLanes, DifferentConstantsBecomeOneConstantVector) {
    // [v[0] * 2 + 1, v[1] * 3 + 1]: Mul by the constant [2, 3], one Add.
    GraphBuilder b("lane_constants");
    ValueId v = b.input("v", DataType::Float, {2});
    ValueId one = b.scalar("one", 1.f);
    ValueId a = b.op("Add", {b.op("Mul", {b.op("Gather", {v, scalarIndex(b, "i0", 0)}), b.scalar("two", 2.f)}), one});
    ValueId c = b.op("Add", {b.op("Mul", {b.op("Gather", {v, scalarIndex(b, "i1", 1)}), b.scalar("three", 3.f)}), one});
    b.output(b.op("Concat", {unsqueezed(b, a), unsqueezed(b, c)}, {Attribute::makeInt("axis", 0)}));
    Model m = b.finish();
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "scalar-lanes-to-vector"));
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.count("Gather"), 0u) << "v itself, in order";
    EXPECT_EQ(counts["Mul"], 1);
    EXPECT_EQ(counts["Add"], 1);
    EXPECT_EQ(m.graph.nodeOrder().size(), 2u);
}

TEST(ScalarLanes, RefusedWhenTheChainsDifferOrNothingIsSaved) {
    auto lanes = [](const std::string& op0, const std::string& op1, bool sameVector, bool readElsewhere) {
        GraphBuilder b("lanes");
        ValueId v = b.input("v", DataType::Float, {3});
        ValueId u = b.input("u", DataType::Float, {3});
        ValueId x = b.input("x", DataType::Float, {3});
        ValueId g0 = b.op("Gather", {v, scalarIndex(b, "i0", 0)});
        ValueId g1 = b.op("Gather", {sameVector ? v : u, scalarIndex(b, "i1", 1)});
        ValueId k0 = b.op("Gather", {x, scalarIndex(b, "j0", 0)});
        ValueId k1 = b.op("Gather", {x, scalarIndex(b, "j1", 1)});
        ValueId a = b.op(op0, {g0, k0});
        ValueId c = b.op(op1, {g1, k1});
        b.output(b.op("Concat", {unsqueezed(b, a), unsqueezed(b, c)}, {Attribute::makeInt("axis", 0)}));
        if (readElsewhere)  // every gathered element and both products are read by another output too
            for (ValueId s : {g0, g1, k0, k1, a, c}) b.output(b.op("Neg", {s}));
        return b.finish();
    };
    struct Case {
        const char* why;
        Model m;
    };
    std::vector<Case> cases;
    cases.push_back({"different ops", lanes("Mul", "Add", true, false)});
    cases.push_back({"different vectors", lanes("Mul", "Mul", false, false)});
    cases.push_back({"no fewer nodes", lanes("Mul", "Mul", true, true)});
    for (auto& [why, m] : cases) {
        auto before = test::opCounts(m.graph);
        auto r = runAlgebraic(m);
        EXPECT_FALSE(applied(r, "scalar-lanes-to-vector")) << why;
        // unsqueeze-into-gather may still take a lane's Unsqueeze into its Gather; the chains stay.
        auto after = test::opCounts(m.graph);
        before.erase("Unsqueeze");
        after.erase("Unsqueeze");
        EXPECT_EQ(after, before) << why;
    }
    // The same lanes once nothing else reads them: applied.
    Model m = lanes("Mul", "Mul", true, false);
    auto r = runAlgebraic(m);
    EXPECT_TRUE(applied(r, "scalar-lanes-to-vector"));
    EXPECT_EQ(test::opCounts(m.graph)["Mul"], 1);
}

TEST(ScalarLanes, RefusedForScalarsNotGatheredFromOneVector) {
    // Two scalar inputs: nothing to gather them from (and inputs read by nothing else but this).
    GraphBuilder b("inputs");
    ValueId a = b.input("a", DataType::Float, {});
    ValueId c = b.input("c", DataType::Float, {});
    ValueId one = b.scalar("one", 1.f);
    b.output(b.op("Concat", {unsqueezed(b, b.op("Add", {a, one})), unsqueezed(b, b.op("Add", {c, one}))},
                  {Attribute::makeInt("axis", 0)}));
    Model m = b.finish();
    auto r = runAlgebraic(m);
    EXPECT_FALSE(applied(r, "scalar-lanes-to-vector"));
    EXPECT_EQ(test::opCounts(m.graph)["Concat"], 1);
}
