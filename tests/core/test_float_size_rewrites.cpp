// min-of-ordered-sizes and cast-round-trip (shape-chain-folding, FloatSizeRewrites.cpp) on
// hand-built float32 size arithmetic as torchvision's detection transform writes it: rewritten,
// refused (constants differ, sizes not ordered, no monotone chain, a float that is not a whole
// number, a float that becomes a size again), outputs equal at every binding, a second run idle.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

Attribute to(DataType t) { return Attribute::makeInt("to", int64_t(t)); }
Attribute noKeep() { return Attribute::makeInt("keepdims", 0); }

const std::vector<test::DimBindings> kImages{{{"h", 64}, {"w", 64}}, {{"h", 50}, {"w", 120}}, {{"h", 130}, {"w", 40}},
                                              {{"h", 1000}, {"w", 20}}, {{"h", 1}, {"w", 1}}};
const std::vector<std::string> kPipeline{"shape-chain-folding", "dce"};

struct ScaleOptions {
    float minConstant = 64.f, maxConstant = 64.f;
    bool orderedRoots = true;  ///< ReduceMin/ReduceMax of [h, w]; else h and w themselves
    bool useMax = false;       ///< Max of the two sides instead of Min
    bool shifted = false;      ///< an Add of a constant inside the chain (not a step the rule takes)
};

/// image [3, h, w] → k / min(h, w) and k / max(h, w) (Reciprocal, Mul) → Min → image * scale.
Model scaleModel(const ScaleOptions& o) {
    GraphBuilder b("scale");
    const ValueId image = b.inputSymbolic("image", DataType::Float, {Dim::of(3), Dim::symbol("h"), Dim::symbol("w")});
    const ValueId hw = b.op("Shape", {image}, {Attribute::makeInt("start", 1), Attribute::makeInt("end", 3)});
    auto side = [&](ValueId size, float k, const std::string& tag) {
        ValueId f = b.op("Cast", {size}, {to(DataType::Float)});
        if (o.shifted && tag == "a") f = b.op("Add", {f, b.scalar("one_" + tag, 1.f)});
        return b.op("Mul", {b.op("Reciprocal", {f}), b.scalar("k_" + tag, k)});
    };
    ValueId lo, hi;
    if (o.orderedRoots) {
        lo = b.op("ReduceMin", {hw}, {noKeep()});
        hi = b.op("ReduceMax", {hw}, {noKeep()});
    } else {
        lo = b.op("Gather", {hw, b.constant("i0", int64Tensor({}, {0}))});
        hi = b.op("Gather", {hw, b.constant("i1", int64Tensor({}, {1}))});
    }
    const ValueId scale = b.op(o.useMax ? "Max" : "Min", {side(lo, o.minConstant, "a"), side(hi, o.maxConstant, "b")});
    b.output(b.op("Mul", {image, scale}));
    return b.finish();
}

struct SizeOptions {
    bool floor = true;        ///< the float size is a Floor (a whole number)
    bool backToSize = false;  ///< the float read back also becomes an integer size again
};

/// image [3, h, w] → sizes = int64(floor([h, w] * 64 / max(h, w))) (a fresh size in [0, 64]) →
/// Resize → the resized height read back as float divides h (torchvision's box rescale ratio).
Model roundTripModel(const SizeOptions& o) {
    GraphBuilder b("roundtrip");
    const ValueId image = b.inputSymbolic("image", DataType::Float, {Dim::of(3), Dim::symbol("h"), Dim::symbol("w")});
    const ValueId hw = b.op("Shape", {image}, {Attribute::makeInt("start", 1), Attribute::makeInt("end", 3)});
    const ValueId big = b.op("Cast", {b.op("ReduceMax", {hw}, {noKeep()})}, {to(DataType::Float)});
    const ValueId scale = b.op("Mul", {b.op("Reciprocal", {big}), b.scalar("k64", 64.f)});
    auto resized = [&](int64_t i, const std::string& tag) {
        ValueId f = b.op("Cast", {b.op("Gather", {hw, b.constant("i_" + tag, int64Tensor({}, {i}))})}, {to(DataType::Float)});
        ValueId s = b.op("Mul", {f, scale});
        if (o.floor) s = b.op("Floor", {s});
        return std::make_pair(f, b.op("Unsqueeze", {s, b.ints("ax_" + tag, {0})}));
    };
    const auto [fh, uh] = resized(0, "h");
    const auto [fw, uw] = resized(1, "w");
    const ValueId sizes = b.op("Cast", {b.op("Concat", {uh, uw}, {Attribute::makeInt("axis", 0)})}, {to(DataType::Int64)});
    const ValueId full = b.op("Concat", {b.ints("nc", {1, 3}), sizes}, {Attribute::makeInt("axis", 0)});
    const ValueId batch = b.op("Unsqueeze", {image, b.ints("ax_b", {0})});
    const ValueId r = b.op("Resize", {batch, kNone, kNone, full},
                           {Attribute::makeString("mode", "nearest"), Attribute::makeString("coordinate_transformation_mode", "asymmetric")});
    const ValueId rh = b.op("Gather", {b.op("Shape", {r}), b.constant("i_rh", int64Tensor({}, {2}))});
    const ValueId rhFloat = b.op("Cast", {rh}, {to(DataType::Float)});
    b.output(r);
    b.output(b.op("Div", {fh, rhFloat}));
    (void)fw;
    if (o.backToSize) {
        const ValueId twice = b.op("Cast", {b.op("Mul", {rhFloat, b.scalar("k2", 2.f)})}, {to(DataType::Int64)});
        b.output(b.op("ConstantOfShape", {b.op("Unsqueeze", {twice, b.ints("ax_t", {0})})}));
    }
    return b.finish();
}

int count(const Model& m, const std::string& op) {
    const auto c = test::opCounts(m.graph);
    auto it = c.find(op);
    return it == c.end() ? 0 : it->second;
}

bool applied(const passes::PipelineResult& r, const std::string& rule) {
    for (const auto& step : r.steps)
        for (const auto& c : step.result.changes)
            if (c.rule == rule) return true;
    return false;
}

}  // namespace

TEST(FloatSizeRewrites, MinOfOneMonotoneChainOverOrderedSizesIsOneSide) {
    Model m = scaleModel({});
    const auto r = test::runCheckedAtBindings(m, kPipeline, kImages);
    EXPECT_TRUE(applied(r, "min-of-ordered-sizes"));
    // 64 / max(h, w) is the smaller: the Min, and the min(h, w) side, are gone.
    EXPECT_EQ(count(m, "Min"), 0);
    EXPECT_EQ(count(m, "ReduceMin"), 0);
    EXPECT_EQ(count(m, "Reciprocal"), 1);

    Model larger = scaleModel({.useMax = true});
    const auto rl = test::runCheckedAtBindings(larger, kPipeline, kImages);
    EXPECT_TRUE(applied(rl, "min-of-ordered-sizes"));
    EXPECT_EQ(count(larger, "Max"), 0);
    EXPECT_EQ(count(larger, "ReduceMax"), 0);  // the Max keeps 64 / min(h, w)
}

TEST(FloatSizeRewrites, MinStaysWhenTheChainsOrTheSizesDiffer) {
    for (const ScaleOptions& o : {ScaleOptions{.minConstant = 800.f, .maxConstant = 1333.f}, ScaleOptions{.orderedRoots = false},
                                  ScaleOptions{.shifted = true}}) {
        Model m = scaleModel(o);
        const auto r = test::runCheckedAtBindings(m, kPipeline, kImages);
        EXPECT_FALSE(applied(r, "min-of-ordered-sizes"));
        EXPECT_EQ(count(m, "Min"), 1);
    }
}

TEST(FloatSizeRewrites, WholeFloatSizeReadBackAsFloatIsTheFloorThatMadeIt) {
    Model m = roundTripModel({});
    const int castsBefore = count(m, "Cast");
    const auto r = test::runCheckedAtBindings(m, kPipeline, kImages);
    EXPECT_TRUE(applied(r, "cast-round-trip"));
    // The Div reads the Floor: the Cast back, the Gather and the Shape of the Resize go.
    EXPECT_EQ(count(m, "Cast"), castsBefore - 1);
    EXPECT_EQ(count(m, "Shape"), 1);
}

TEST(FloatSizeRewrites, RoundTripStaysForAFractionOrAFloatThatBecomesASizeAgain) {
    // Without the Floor the cast to int64 truncates: casting back is not the float.
    Model fraction = roundTripModel({.floor = false});
    const auto r = test::runCheckedAtBindings(fraction, kPipeline, kImages);
    EXPECT_FALSE(applied(r, "cast-round-trip"));
    // A float read back that feeds a size again keeps its exact integer origin for the engine.
    Model size = roundTripModel({.backToSize = true});
    const auto rs = test::runCheckedAtBindings(size, kPipeline, kImages);
    EXPECT_FALSE(applied(rs, "cast-round-trip"));
}
