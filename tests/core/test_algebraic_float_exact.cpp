// Issue #43: the full-size Faster R-CNN's boxes moved by up to 16 px after basic. constant-folding
// turned the exporter's Constant divisors into initializers, and algebraic then rewrote x / c as
// x · (1/c) for c = 0.229 (the image normalization), 224 and ln 2 (the RoI level), 10 and 5 (the
// box decode): one rounding of a different real number, so some values changed in the last bit,
// and the detector's Floor and NonMaxSuppression (tied scores) made that another box. The float
// rewrites of algebraic and fold-constant-chains now take only exact cases (passes/FloatExact.h);
// these tests compare the interpreter's outputs bit for bit, which tolerance-based checks did not.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "passes/FloatExact.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;
using passlens::test::hasRemark;
using passlens::test::opCounts;

namespace {

using Counts = std::map<std::string, int>;

/// A Constant node, as torch.onnx writes every constant: algebraic sees it as a constant only after
/// constant-folding made it an initializer (why each pass alone was exact in the issue).
ValueId constantNode(GraphBuilder& b, const std::string& name, TensorPtr t) {
    return b.op("Constant", {}, {Attribute::makeTensor("value", std::move(t))}, name);
}

test::CheckOptions exact(std::vector<float> values = {}) {
    test::CheckOptions o;
    o.rtol = 0;
    o.atol = 0;
    if (!values.empty())
        o.adjustInputs = [values](std::vector<TensorPtr>) { return std::vector<TensorPtr>{floatTensor({(int64_t)values.size()}, values)}; };
    return o;
}

const PassResult& stepOf(const PipelineResult& r, const std::string& pass) {
    for (const auto& s : r.steps)
        if (s.result.name == pass) return s.result;
    throw std::runtime_error("no step " + pass);
}

}  // namespace

TEST(FloatExactRewrites, PowerOfTwoScale) {
    for (float v : {1.f, 2.f, 0.5f, -4.f, 0.125f, 1024.f, std::ldexp(1.f, 126)}) EXPECT_TRUE(isPowerOfTwoScale(v)) << v;
    for (float v : {0.f, -0.f, 3.f, 0.229f, 10.f, 224.f, 0.6931472f, std::ldexp(1.f, 127) /* 1/v subnormal */,
                    std::ldexp(1.f, -130) /* subnormal */, std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN()})
        EXPECT_FALSE(isPowerOfTwoScale(v)) << v;
}

// torchvision's GeneralizedRCNNTransform: (image - mean) / std, the constants written as Constant
// nodes. Before the fix, constant-folding + algebraic made it image · (1/std): 1 ulp off for some pixels.
TEST(FloatExactRewrites, ImageNormalizationStaysBitExactThroughConstantFoldingAndAlgebraic) {
    GraphBuilder b("normalize");
    auto image = b.input("image", DataType::Float, {1, 3, 8, 8});
    auto mean = constantNode(b, "mean", floatTensor({3, 1, 1}, {0.485f, 0.456f, 0.406f}));
    auto stdev = constantNode(b, "std", floatTensor({3, 1, 1}, {0.229f, 0.224f, 0.225f}));
    b.output(b.op("Div", {b.op("Sub", {image, mean}, {}, "sub"), stdev}, {}, "div"));
    Model m = b.finish();
    const PipelineResult r = test::runCheckedAtBindings(m, {"constant-folding", "algebraic"}, {{}});  // bit for bit
    EXPECT_EQ(opCounts(m.graph), (Counts{{"Div", 1}, {"Sub", 1}}));
    EXPECT_TRUE(hasRemark(stepOf(r, "algebraic"), RemarkKind::Missed, "div-to-mul",
                          "not a power of two (0.229), so 1/c is not exact in float32"));
}

// MultiScaleRoIAlign's LevelMapper floors a function of s / 224: s = 223.99998 is level 0, but
// s · (1/224) rounds up to 1.0 and Floor makes it 1: no tolerance hides a level (or a box) jump.
TEST(FloatExactRewrites, FloorOfDivisionByNonPowerOfTwoKeepsItsValue) {
    GraphBuilder b("level");
    auto s = b.input("s", DataType::Float, {4});
    b.output(b.op("Floor", {b.op("Div", {s, b.constant("canonical", floatTensor({}, {224.f}))}, {}, "div")}, {}, "floor"));
    Model m = b.finish();
    auto run = test::runChecked(m, "algebraic", exact({223.99998474121094f, 447.9999694824219f, 895.9999389648438f, 224.f}));
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "div-to-mul", "divisor 'canonical' has an element that is not a power of two"));
}

TEST(FloatExactRewrites, DivisionByPowersOfTwoStillBecomesMul) {
    GraphBuilder b("halves");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Div", {x, b.constant("c", floatTensor({3}, {2.f, 0.25f, -8.f}))}, {}, "div"));
    Model m = b.finish();
    auto run = test::runChecked(m, "algebraic", exact());
    EXPECT_EQ(run.after, (Counts{{"Mul", 1}}));
    const Node& mul = m.graph.node(m.graph.nodeOrder().front());
    const Tensor& r = *m.graph.value(mul.inputs[1]).initializer;
    EXPECT_EQ(std::vector<float>(r.as<float>(), r.as<float>() + 3), (std::vector<float>{0.5f, 4.f, -0.125f}));
}

// (x + 1.5) + 2 and x + 3.5 differ in the last bit for about 4% of x in [-3, 3] (x = 0.6398147 is one).
TEST(FloatExactRewrites, AddChainIsNotReassociated) {
    GraphBuilder b("add_chain");
    auto x = b.input("x", DataType::Float, {4});
    auto a = b.op("Add", {x, constantNode(b, "c1", floatTensor({}, {1.5f}))}, {}, "inner");
    b.output(b.op("Add", {a, constantNode(b, "c2", floatTensor({}, {2.f}))}, {}, "outer"));
    Model m = b.finish();
    const Model original = m;
    const PipelineResult r = test::runCheckedAtBindings(m, {"constant-folding", "algebraic"}, {{}});
    EXPECT_EQ(opCounts(m.graph), (Counts{{"Add", 2}}));
    EXPECT_TRUE(hasRemark(stepOf(r, "algebraic"), RemarkKind::Missed, "reassociate-add", "float32 addition is not associative"));
    const std::vector<TensorPtr> in{floatTensor({4}, {0.6398146748542786f, 0.883137047290802f, 0.48199430108070374f, 1.f})};
    const auto want = eval::run(original, in), got = eval::run(m, in);
    for (const auto& d : eval::compareOutputs(original, got, want, 0, 0)) EXPECT_TRUE(d.ok) << d.name;
}

// (x·3)·3 and x·9 round differently for about 23% of x; (x·3)·0.5 and x·1.5 never do.
TEST(FloatExactRewrites, MulChainReassociatesOnlyThroughAPowerOfTwo) {
    auto chain = [](float c1, float c2) {
        GraphBuilder b("mul_chain");
        auto x = b.input("x", DataType::Float, {64});
        auto a = b.op("Mul", {x, b.constant("c1", floatTensor({}, {c1}))}, {}, "inner");
        b.output(b.op("Mul", {a, b.constant("c2", floatTensor({}, {c2}))}, {}, "outer"));
        return b.finish();
    };
    Model kept = chain(3.f, 3.f);
    auto refused = test::runChecked(kept, "algebraic", exact());
    EXPECT_EQ(refused.after, (Counts{{"Mul", 2}}));
    EXPECT_TRUE(hasRemark(refused.result, RemarkKind::Missed, "reassociate-mul", "neither of which is a power of two"));
    Model merged = chain(3.f, 0.5f);
    auto applied = test::runChecked(merged, "algebraic", exact());
    EXPECT_EQ(applied.after, (Counts{{"Mul", 1}}));
    EXPECT_TRUE(hasRemark(applied.result, RemarkKind::Applied, "reassociate-mul", "(x·c1)·c2 = x·(c1·c2)"));
}

// fold-constant-chains (extended) keeps the op of the step that rounds and moves the power of two
// into its coefficient; chains with no power of two, and additive chains, stay.
TEST(FloatExactRewrites, ConstantChainsFoldOnlyThroughAPowerOfTwo) {
    struct Case { std::string a; float k1; std::string b; float k2; std::string expect; float merged; };
    for (const Case& c : std::vector<Case>{{"Mul", 1.5f, "Mul", 0.5f, "Mul", 0.75f}, {"Mul", 0.5f, "Mul", 1.5f, "Mul", 0.75f},
                                           {"Mul", 1.5f, "Div", 0.5f, "Mul", 3.f}, {"Div", 1.5f, "Mul", 0.5f, "Div", 3.f},
                                           {"Div", 1.5f, "Div", 0.5f, "Div", 0.75f}, {"Div", 2.f, "Div", 1.5f, "Div", 3.f},
                                           {"Div", 10.f, "Mul", 4.f, "Div", 2.5f}}) {
        Model m = test::scalarChain(c.a, c.k1, c.b, c.k2, {64});
        auto run = test::runChecked(m, "fold-constant-chains", exact());
        const std::string label = c.a + " " + std::to_string(c.k1) + " " + c.b + " " + std::to_string(c.k2);
        ASSERT_EQ(run.after, (Counts{{c.expect, 1}})) << label;
        const Node& n = m.graph.node(m.graph.nodeOrder().front());
        EXPECT_EQ(m.graph.value(n.inputs[1]).initializer->as<float>()[0], c.merged) << label;
    }
    for (const Case& c : std::vector<Case>{{"Mul", 1.5f, "Mul", 0.75f, "", 0}, {"Div", 10.f, "Div", 5.f, "", 0},
                                           {"Add", 1.5f, "Sub", 0.5f, "", 0}, {"Sub", 0.25f, "Add", 2.f, "", 0}}) {
        Model m = test::scalarChain(c.a, c.k1, c.b, c.k2, {64});
        auto run = test::runChecked(m, "fold-constant-chains", exact());
        EXPECT_EQ(run.after, run.before) << c.a << c.b;
        EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "constant-chain", "first + second not folded")) << c.a << c.b;
    }
}
