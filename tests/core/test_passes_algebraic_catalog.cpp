// Golden tests for the later algebraic rules: constant chains reassociated, Reshape∘Reshape,
// Squeeze/Unsqueeze pairs, Max(x, LeakyRelu(x)), no-op Slice/Pad/Expand, integer x·0, and the
// rules inside an If body. Positive and negative cases, op counts, remarks, provenance, numerics.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "examples/Builder.h"
#include "passes/Pass.h"
#include "PassTestSupport.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;
using passlens::test::hasRemark;
using passlens::test::runChecked;
using passlens::test::silentAbout;

namespace {

using Counts = std::map<std::string, int>;

std::vector<float> floatsOf(const Graph& g, ValueId v) {
    const Tensor& t = *g.value(v).initializer;
    return std::vector<float>(t.as<float>(), t.as<float>() + t.elementCount());
}

/// The change by `rule` that made a node, if any: its provenance.
std::vector<NodeId> replacedProvenance(const PassResult& r, const std::string& rule) {
    for (const auto& c : r.changes)
        if (c.rule == rule && c.kind == ChangeKind::Replaced) return c.provenance;
    return {};
}

Model chain(const std::string& op, TensorPtr c1, TensorPtr c2, bool secondReader = false, DataType t = DataType::Float) {
    GraphBuilder b("chain");
    auto x = b.input("x", t, {2, 3});
    auto a = b.op(op, {x, b.constant("c1", std::move(c1))}, {}, "inner");
    auto y = b.op(op, {b.constant("c2", std::move(c2)), a}, {}, "outer");
    b.output(b.op("Abs", {y}, {}, "abs"));
    if (secondReader) b.output(b.op("Neg", {a}, {}, "other"));
    return b.finish();
}

}  // namespace

// ---- constant chains ------------------------------------------------------------------------------

TEST(AlgebraicCatalog, MulChainReassociated) {
    Model m = chain("Mul", floatTensor({3}, {1, 2, 3}), floatTensor({3}, {2, 2, 0.5f}));
    NodeId inner = *m.graph.findNode("inner"), outer = *m.graph.findNode("outer");
    auto run = runChecked(m);
    EXPECT_EQ(run.before, (Counts{{"Abs", 1}, {"Mul", 2}}));
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}, {"Mul", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "reassociate-mul", "inner and outer: (x·c1)·c2 = x·(c1·c2)"));
    EXPECT_EQ(replacedProvenance(run.result, "reassociate-mul"), (std::vector<NodeId>{inner, outer}));
    const Node& mul = m.graph.node(*m.graph.findNode("outer"));
    EXPECT_EQ(floatsOf(m.graph, mul.inputs[1]), (std::vector<float>{2, 4, 1.5f}));
}

TEST(AlgebraicCatalog, AddChainOfScalarsIsMissed) {
    Model m = chain("Add", floatTensor({}, {1.5f}), floatTensor({}, {2}));
    auto run = runChecked(m);  // (x+1.5)+2 and x+3.5 round differently for some x (issue #43)
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reassociate-add", "not reassociated: float32 addition is not associative"));
}

TEST(AlgebraicCatalog, MulChainWithoutPowerOfTwoIsMissed) {
    Model m = chain("Mul", floatTensor({3}, {1, 2, 3}), floatTensor({3}, {3, 3, 3}));
    auto run = runChecked(m);  // 1·3 and 2·3 are exact, (x·3)·3 is not x·9
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reassociate-mul", "'c1' and 'c2' meet in elements neither of which is a power of two"));
}

TEST(AlgebraicCatalog, ChainThatCancelsOutVanishes) {
    Model m = chain("Mul", floatTensor({}, {4}), floatTensor({}, {0.25f}));
    auto run = runChecked(m);  // 4 · 0.25 = 1: the merged Mul is then a mul-one
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "mul-one", ""));
}

TEST(AlgebraicCatalog, ChainOnSymbolicShapeReassociated) {
    GraphBuilder b("chain_sym");
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(3)});
    auto a = b.op("Mul", {x, b.constant("c1", floatTensor({3}, {1, 2, 3}))}, {}, "inner");
    b.output(b.op("Abs", {b.op("Mul", {a, b.constant("c2", floatTensor({1, 1}, {4}))}, {}, "outer")}, {}, "abs"));
    Model m = b.finish();
    auto run = runChecked(m);  // interpreter runs with n = 1
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}, {"Mul", 1}}));
    const Node& mul = m.graph.node(*m.graph.findNode("outer"));
    EXPECT_EQ(m.graph.value(mul.inputs[1]).initializer->dims, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(floatsOf(m.graph, mul.inputs[1]), (std::vector<float>{4, 8, 12}));
}

TEST(AlgebraicCatalog, ChainWithSharedIntermediateIsMissed) {
    Model m = chain("Mul", floatTensor({3}, {1, 2, 3}), floatTensor({3}, {2, 2, 2}), true);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reassociate-mul", "not reassociated: inner's result has other readers"));
}

TEST(AlgebraicCatalog, ChainWhoseConstantWouldGrowIsMissed) {
    Model m = chain("Add", floatTensor({2, 1}, {1, 2}), floatTensor({1, 3}, {1, 2, 3}));
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reassociate-add", "larger than both constants"));
}

TEST(AlgebraicCatalog, IntegerChainNotReassociated) {
    Model m = chain("Add", int64Tensor({}, {1}), int64Tensor({}, {2}), false, DataType::Int64);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "reassociate-add"));
}

// ---- Reshape∘Reshape -------------------------------------------------------------------------------

Model reshapes(std::vector<int64_t> s1, std::vector<int64_t> s2, bool secondReader = false) {
    GraphBuilder b("reshapes");
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto a = b.op("Reshape", {x, b.ints("s1", s1)}, {}, "r1");
    auto y = b.op("Reshape", {a, b.ints("s2", s2)}, {}, "r2");
    b.output(b.op("Relu", {y}, {}, "relu"));
    if (secondReader) b.output(b.op("Sigmoid", {a}, {}, "other"));
    return b.finish();
}

TEST(AlgebraicCatalog, ReshapeChainMerged) {
    Model m = reshapes({6, 4}, {4, -1});
    NodeId r1 = *m.graph.findNode("r1"), r2 = *m.graph.findNode("r2");
    auto run = runChecked(m);
    EXPECT_EQ(run.before, (Counts{{"Relu", 1}, {"Reshape", 2}}));
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}, {"Reshape", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "reshape-reshape", "r1 and r2 merged into one Reshape to [4, -1]"));
    EXPECT_EQ(replacedProvenance(run.result, "reshape-reshape"), (std::vector<NodeId>{r1, r2}));
    const Node& r = m.graph.node(*m.graph.findNode("r2"));
    EXPECT_EQ(m.graph.value(r.inputs[0]).name, "x");
}

TEST(AlgebraicCatalog, ReshapeChainZeroEntryResolvedAgainstIntermediate) {
    Model m = reshapes({6, 4}, {0, 2, 2});  // 0 copies the intermediate's 6, not x's 2
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}, {"Reshape", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "reshape-reshape", "merged into one Reshape to [6, 2, 2]"));
}

TEST(AlgebraicCatalog, ReshapeRoundTripVanishes) {
    Model m = reshapes({24}, {2, 3, 4});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "reshape-noop", ""));
}

TEST(AlgebraicCatalog, ReshapeChainWithSharedIntermediateIsMissed) {
    Model m = reshapes({6, 4}, {4, 6}, true);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reshape-reshape", "not merged: r1's result has other readers"));
}

TEST(AlgebraicCatalog, ReshapeChainWithComputedTargetIsMissed) {
    GraphBuilder b("reshape_dyn");
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto s = b.input("s", DataType::Int64, {2});
    auto a = b.op("Reshape", {x, b.ints("s1", {6, 4})}, {}, "r1");
    b.output(b.op("Reshape", {a, s}, {}, "r2"));
    Model m = b.finish();
    auto r = test::runPassOnce("algebraic", m);
    EXPECT_EQ(test::opCounts(m.graph)["Reshape"], 2);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "reshape-reshape", "the target shape of r2 is not a constant"));
}

TEST(AlgebraicCatalog, ReshapeChainZeroEntryOfUnknownDimIsMissed) {
    GraphBuilder b("reshape_sym");
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(3), Dim::of(4)});
    auto a = b.op("Reshape", {x, b.ints("s1", {-1, 4})}, {}, "r1");  // [3n, 4]: dim 0 unknown
    auto y = b.op("Reshape", {a, b.ints("s2", {0, 2, 2})}, {}, "r2");
    b.output(b.op("Relu", {y}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "reshape-reshape",
                          "entry 0 of r2's target shape copies a dim of r1's result, whose size is unknown"));
}

TEST(AlgebraicCatalog, ReshapeChainKeepsOuterAllowzero) {
    GraphBuilder b("reshape_allowzero", 14);
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto a = b.op("Reshape", {x, b.ints("s1", {6, 4})}, {}, "r1");
    auto y = b.op("Reshape", {a, b.ints("s2", {4, 6})}, {Attribute::makeInt("allowzero", 1)}, "r2");
    b.output(b.op("Relu", {y}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}, {"Reshape", 1}}));
    EXPECT_EQ(m.graph.node(*m.graph.findNode("r2")).attrInt("allowzero", 0), 1);
}

// ---- Squeeze / Unsqueeze ---------------------------------------------------------------------------

TEST(AlgebraicCatalog, UnsqueezeOfSqueezeCancelsWithAxesInputs) {
    GraphBuilder b("sq", 13);
    auto x = b.input("x", DataType::Float, {2, 1, 3});
    auto s = b.op("Squeeze", {x, b.ints("a1", {1})}, {}, "squeeze");
    auto u = b.op("Unsqueeze", {s, b.ints("a2", {-2})}, {}, "unsqueeze");
    b.output(b.op("Relu", {u}, {}, "relu"));
    Model m = b.finish();
    NodeId squeeze = *m.graph.findNode("squeeze");
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "unsqueeze-squeeze", "unsqueeze: Unsqueeze(Squeeze(x, axes), axes) = x"));
    EXPECT_TRUE(test::changeMentions(run.result, "unsqueeze-squeeze", squeeze));
}

TEST(AlgebraicCatalog, SqueezeOfUnsqueezeCancelsWithAxesAttributes) {
    GraphBuilder b("sq11", 11);
    auto x = b.input("x", DataType::Float, {2, 3});
    auto u = b.op("Unsqueeze", {x}, {Attribute::makeInts("axes", {0, 3})}, "unsqueeze");
    auto s = b.op("Squeeze", {u}, {Attribute::makeInts("axes", {-1, 0})}, "squeeze");
    b.output(b.op("Relu", {s}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "squeeze-unsqueeze", "squeeze: Squeeze(Unsqueeze(x, axes), axes) = x"));
}

TEST(AlgebraicCatalog, SqueezePairOnDifferentAxesIsMissed) {
    GraphBuilder b("sq_diff", 13);
    auto x = b.input("x", DataType::Float, {1, 2, 1});
    auto s = b.op("Squeeze", {x, b.ints("a1", {0})}, {}, "squeeze");
    auto u = b.op("Unsqueeze", {s, b.ints("a2", {2})}, {}, "unsqueeze");
    b.output(b.op("Relu", {u}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "unsqueeze-squeeze", "use different axes ([0] vs [2])"));
}

TEST(AlgebraicCatalog, SqueezeWithoutAxesIsMissed) {
    GraphBuilder b("sq_all", 13);
    auto x = b.input("x", DataType::Float, {1, 2, 1});
    auto s = b.op("Squeeze", {x}, {}, "squeeze");
    auto u = b.op("Unsqueeze", {s, b.ints("a2", {0})}, {}, "unsqueeze");
    b.output(b.op("Relu", {u}, {}, "relu"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "unsqueeze-squeeze", "squeeze has no axes"));
}

// ---- Max(x, LeakyRelu(x)) ----------------------------------------------------------------------------

Model maxOf(const std::string& act, float alpha, bool actFirst) {
    GraphBuilder b("max");
    auto x = b.input("x", DataType::Float, {2, 3});
    std::vector<Attribute> attrs;
    if (act == "LeakyRelu") attrs.push_back(Attribute::makeFloat("alpha", alpha));
    auto a = b.op(act, {x}, attrs, "act");
    auto y = actFirst ? b.op("Max", {a, x}, {}, "max") : b.op("Max", {x, a}, {}, "max");
    b.output(b.op("Abs", {y}, {}, "abs"));
    return b.finish();
}

TEST(AlgebraicCatalog, MaxOfLeakyReluIsTheLeakyRelu) {
    Model m = maxOf("LeakyRelu", 0.1f, false);
    NodeId max = *m.graph.findNode("max");
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}, {"LeakyRelu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "max-leakyrelu", "max: Max(x, LeakyRelu(x)) = LeakyRelu(x) since alpha <= 1"));
    EXPECT_TRUE(test::changeMentions(run.result, "max-leakyrelu", max));
}

TEST(AlgebraicCatalog, MaxOfReluIsTheRelu) {
    Model m = maxOf("Relu", 0, true);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Abs", 1}, {"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "max-relu", "Max(x, Relu(x)) = Relu(x)"));
}

TEST(AlgebraicCatalog, MaxOfSteepLeakyReluIsMissed) {
    Model m = maxOf("LeakyRelu", 2.f, false);  // alpha 2: Max(x, 2x) = x for x < 0
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "max-leakyrelu", "alpha of act is above 1"));
}

TEST(AlgebraicCatalog, MaxOfLeakyReluOfAnotherValueKept) {
    GraphBuilder b("max_other");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto y = b.input("y", DataType::Float, {2, 3});
    auto a = b.op("LeakyRelu", {y}, {Attribute::makeFloat("alpha", 0.1f)}, "act");
    b.output(b.op("Max", {x, a}, {}, "max"));
    Model m = b.finish();
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(silentAbout(run.result, "max-leakyrelu"));
}

// ---- no-op Slice / Pad / Expand --------------------------------------------------------------------

Model sliceModel(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> steps) {
    GraphBuilder b("slice");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto s = b.op("Slice", {x, b.ints("starts", starts), b.ints("ends", ends), b.ints("axes", {1, 0}), b.ints("steps", steps)},
                  {}, "slice");
    b.output(b.op("Relu", {s}, {}, "relu"));
    return b.finish();
}

TEST(AlgebraicCatalog, FullSliceRemoved) {
    Model m = sliceModel({0, -2}, {std::numeric_limits<int64_t>::max(), 2}, {1, 1});
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "slice-noop", "slice: Slice keeps every element"));
    EXPECT_EQ(run.result.changes.size(), 1u);
    EXPECT_EQ(run.result.changes[0].kind, ChangeKind::Removed);
    EXPECT_EQ(run.result.changes[0].nodeNames, (std::vector<std::string>{"slice"}));
}

TEST(AlgebraicCatalog, RealSlicesKept) {
    for (auto [starts, ends, steps] : {std::tuple{std::vector<int64_t>{1, 0}, std::vector<int64_t>{3, 2}, std::vector<int64_t>{1, 1}},
                                       std::tuple{std::vector<int64_t>{0, 0}, std::vector<int64_t>{2, 2}, std::vector<int64_t>{1, 1}},
                                       std::tuple{std::vector<int64_t>{-1, 0}, std::vector<int64_t>{-4, 2}, std::vector<int64_t>{-1, 1}}}) {
        Model m = sliceModel(starts, ends, steps);
        auto run = runChecked(m);
        EXPECT_EQ(run.after, run.before);
        EXPECT_TRUE(silentAbout(run.result, "slice-noop"));
    }
}

Model padModel(std::vector<int64_t> pads) {
    GraphBuilder b("pad");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Relu", {b.op("Pad", {x, b.ints("pads", pads)}, {}, "pad")}, {}, "relu"));
    return b.finish();
}

TEST(AlgebraicCatalog, ZeroPadRemovedRealPadKept) {
    Model zero = padModel({0, 0, 0, 0});
    auto run = runChecked(zero);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "pad-noop", "pad: Pad with all pads 0"));
    Model real = padModel({0, 1, 0, 0});
    auto run2 = runChecked(real);
    EXPECT_EQ(run2.after, run2.before);
    EXPECT_TRUE(silentAbout(run2.result, "pad-noop"));
}

Model expandModel(std::vector<int64_t> shape) {
    GraphBuilder b("expand");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Relu", {b.op("Expand", {x, b.ints("shape", shape)}, {}, "expand")}, {}, "relu"));
    return b.finish();
}

TEST(AlgebraicCatalog, ExpandToOwnShapeRemovedRealExpandKept) {
    Model same = expandModel({1, 3});
    auto run = runChecked(same);
    EXPECT_EQ(run.after, (Counts{{"Relu", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "expand-noop", "expand: Expand to the shape its input already has"));
    Model bigger = expandModel({4, 2, 3});
    auto run2 = runChecked(bigger);
    EXPECT_EQ(run2.after, run2.before);
    EXPECT_TRUE(silentAbout(run2.result, "expand-noop"));
}

// ---- x·0 ---------------------------------------------------------------------------------------------

Model mulZero(DataType t) {
    GraphBuilder b("mulzero");
    auto x = b.input("x", t, {2, 3});
    auto y = b.input("y", t, {2, 3});
    auto zero = t == DataType::Float ? b.constant("zero", floatTensor({}, {0})) : b.constant("zero", int64Tensor({}, {0}));
    b.output(b.op("Add", {b.op("Mul", {x, zero}, {}, "mul"), y}, {}, "add"));
    return b.finish();
}

TEST(AlgebraicCatalog, IntegerTimesZeroFoldsToZeros) {
    Model m = mulZero(DataType::Int64);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, (Counts{{"Add", 1}}));
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "mul-zero", "mul: integer x*0 = 0"));
    bool folded = false;
    for (const auto& c : run.result.changes) folded |= c.kind == ChangeKind::Folded && c.rule == "mul-zero" && c.nodeNames == std::vector<std::string>{"mul"};
    EXPECT_TRUE(folded);
    const Node& add = m.graph.node(*m.graph.findNode("add"));
    const Value& zeros = m.graph.value(add.inputs[0]);
    ASSERT_TRUE(zeros.initializer);
    EXPECT_EQ(zeros.initializer->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(zeros.initializer->dtype, DataType::Int64);
}

TEST(AlgebraicCatalog, FloatTimesZeroIsMissedBecauseOfNaN) {
    Model m = mulZero(DataType::Float);
    auto run = runChecked(m);
    EXPECT_EQ(run.after, run.before);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "mul-zero", "x*0 is not 0 for floating-point x (NaN*0 and Inf*0 are NaN)"));
}

// ---- inside subgraphs -----------------------------------------------------------------------------

TEST(AlgebraicCatalog, RulesFireInsideIfBody) {
    GraphBuilder b("if_rules");
    auto cond = b.input("cond", DataType::Bool, {});
    (void)b.input("x", DataType::Float, {2, 3});
    auto thenBody = std::make_shared<Graph>();
    thenBody->name = "then";
    {
        Graph& g = *thenBody;
        auto v = [&](const char* n) { return g.addValue(n, TypeInfo::tensor(DataType::Float)); };
        ValueId x = g.addOuterScopeValue("x");
        ValueId s = v("s"), n1 = v("n1"), n2 = v("n2"), l = v("l"), mx = v("mx"), out = v("then_out");
        g.addNode("Sigmoid", {x}, {s}, {}, "sig");
        g.addNode("Neg", {s}, {n1}, {}, "neg1");
        g.addNode("Neg", {n1}, {n2}, {}, "neg2");
        g.addNode("LeakyRelu", {n2}, {l}, {Attribute::makeFloat("alpha", 0.2f)}, "leaky");
        g.addNode("Max", {n2, l}, {mx}, {}, "max");
        g.addNode("Identity", {mx}, {out}, {}, "ident");
        g.markOutput(out);
    }
    auto elseBody = std::make_shared<Graph>();
    elseBody->name = "else";
    {
        ValueId x = elseBody->addOuterScopeValue("x");
        ValueId out = elseBody->addValue("else_out", TypeInfo::tensor(DataType::Float));
        elseBody->addNode("Mul", {x, x}, {out}, {}, "square");
        elseBody->markOutput(out);
    }
    b.output(b.op("If", {cond}, {Attribute::makeGraph("then_branch", thenBody), Attribute::makeGraph("else_branch", elseBody)}, "if"));
    Model m = b.finish();
    EXPECT_EQ(countNodesDeep(m.graph), 8u);
    const Model original = m;
    const auto xt = randomFloats({2, 3}, 5, -2.f, 2.f);
    const auto yes = makeTensorOf<uint8_t>(DataType::Bool, {}, {1}), no = makeTensorOf<uint8_t>(DataType::Bool, {}, {0});
    auto before = eval::run(m, {yes, xt});
    auto r = test::runPassOnce("algebraic", m);
    EXPECT_EQ(countNodesDeep(m.graph), 4u);  // If, Sigmoid, LeakyRelu, Mul
    const Graph& body = *m.graph.node(*m.graph.findNode("if")).attr("then_branch")->g;
    EXPECT_EQ(test::opCounts(body), (Counts{{"LeakyRelu", 1}, {"Sigmoid", 1}}));
    for (const char* rule : {"neg-neg", "max-leakyrelu", "identity"}) {
        bool inBody = false;
        for (const auto& rm : r.remarks) inBody |= rm.rule == rule && rm.kind == RemarkKind::Applied && !rm.graphPath.empty();
        EXPECT_TRUE(inBody) << rule;
    }
    for (const auto& d : eval::compareOutputs(original, eval::run(m, {yes, xt}), before, 1e-6, 1e-7)) EXPECT_TRUE(d.ok) << d.name;
    for (const auto& d : eval::compareOutputs(original, eval::run(m, {no, xt}), eval::run(original, {no, xt}), 1e-6, 1e-7))
        EXPECT_TRUE(d.ok) << d.name;
    EXPECT_FALSE(onnxio::checkModel(m).has_value());
    EXPECT_FALSE(test::runPassOnce("algebraic", m).changed);
}
