// shape-chain-folding with the symbolic shape engine: Reshape targets computed from symbolic dims
// become constants (0 = copy the input's dim, one -1), integer results that are numbers whatever
// the dims are fold, Expands to the input's own shape go; Dropout with ratio 0 goes even in
// training mode. Positive and negative cases, op counts, remarks, outputs at two bindings.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "passes/match/Match.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

using Bindings = std::vector<std::pair<std::string, int64_t>>;

ValueId scalarInt(GraphBuilder& b, const std::string& name, int64_t v) { return b.constant(name, int64Tensor({}, {v})); }

/// [batch, seq, 64] float input.
ValueId tokens(GraphBuilder& b) {
    return b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(64)});
}

ValueId dimOf(GraphBuilder& b, ValueId shape, int64_t i) {
    static int counter = 0;
    const std::string tag = std::to_string(++counter);
    return b.op("Unsqueeze", {b.op("Gather", {shape, scalarInt(b, "index" + tag, i)}), b.ints("axes" + tag, {0})});
}

/// Runs `passes` and checks the outputs at two bindings against the original's.
passes::PipelineResult runAndCompare(Model& m, const std::vector<std::string>& names) {
    const Model original = m;
    passes::PassManager pm;
    for (const auto& n : names) pm.addPass(n);
    auto result = pm.run(m);
    for (const Bindings& b : {Bindings{{"batch", 2}, {"seq", 3}}, Bindings{{"batch", 3}, {"seq", 5}}}) {
        auto inputs = eval::randomInputs(original, 5, b);
        auto want = eval::run(original, inputs);
        auto got = eval::run(m, inputs);
        for (const auto& d : eval::compareOutputs(original, got, want, 1e-6, 1e-7)) EXPECT_TRUE(d.ok) << d.name;
    }
    return result;
}

bool hasRemark(const passes::PipelineResult& r, passes::RemarkKind kind, const std::string& rule, const std::string& text = {}) {
    for (const auto& step : r.steps)
        for (const auto& rm : step.result.remarks)
            if (rm.kind == kind && rm.rule == rule && rm.message.find(text) != std::string::npos) return true;
    return false;
}

std::vector<int64_t> constantTarget(const Model& m, NodeId reshape) {
    auto t = passes::match::constantOf(m.graph, m.graph.node(reshape).inputs[1]);
    if (!t) return {};
    return std::vector<int64_t>(t->as<int64_t>(), t->as<int64_t>() + t->elementCount());
}

NodeId producer(const Model& m, ValueId v) { return m.graph.value(v).producer; }

}  // namespace

TEST(ShapeFolding, ArithmeticTargetBecomesMinusOneAndCopiesBecomeZero) {
    GraphBuilder b("flatten_tokens");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    // x.reshape(batch * seq, 64): the exporter multiplies the two gathered dims.
    ValueId bs = b.op("Mul", {dimOf(b, s, 0), dimOf(b, s, 1)});
    ValueId flat = b.op("Reshape", {x, b.op("Concat", {bs, b.ints("c64", {64})}, {Attribute::makeInt("axis", 0)})});
    // x.reshape(batch, seq, 8, 8): entries that copy x's own dims become 0.
    ValueId heads = b.op("Reshape", {x, b.op("Concat", {dimOf(b, s, 0), dimOf(b, s, 1), b.ints("c88", {8, 8})},
                                             {Attribute::makeInt("axis", 0)})});
    b.output(flat);
    b.output(heads);
    Model m = b.finish();
    const NodeId flatNode = producer(m, flat), headsNode = producer(m, heads);
    auto r = runAndCompare(m, {"shape-chain-folding", "dce"});
    EXPECT_EQ(constantTarget(m, flatNode), (std::vector<int64_t>{-1, 64}));
    EXPECT_EQ(constantTarget(m, headsNode), (std::vector<int64_t>{0, 0, 8, 8}));
    EXPECT_EQ(test::opCounts(m.graph).count("Shape"), 0u) << "the chains are dead once the targets are constants";
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "reshape-target-from-symbols", "batch*seq"));
    // A second run finds nothing left to do.
    passes::PassManager again;
    again.addPass("shape-chain-folding");
    EXPECT_FALSE(again.run(m).steps.back().result.changed);
}

TEST(ShapeFolding, TwoSymbolicEntriesThatAreNotCopiesAreRebuiltWithOneMinusOne) {
    GraphBuilder b("swap");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    // [seq, batch, 64]: both symbolic entries move, so neither is a 0 and only one may be -1: the
    // target stays computed, as [-1, batch, 64] from one Shape slice and a Concat (6 nodes → 2).
    ValueId y = b.op("Reshape", {x, b.op("Concat", {dimOf(b, s, 1), dimOf(b, s, 0), b.ints("c64", {64})},
                                         {Attribute::makeInt("axis", 0)})});
    b.output(y);
    Model m = b.finish();
    const NodeId reshape = producer(m, y);
    auto r = runAndCompare(m, {"shape-chain-folding", "dce"});
    EXPECT_TRUE(constantTarget(m, reshape).empty());
    EXPECT_EQ(test::opCounts(m.graph).at("Shape"), 1);
    EXPECT_EQ(test::opCounts(m.graph).at("Concat"), 1);
    EXPECT_EQ(test::opCounts(m.graph).count("Gather"), 0u);
    EXPECT_EQ(m.graph.nodeOrder().size(), 3u);
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "rebuild-shape-vector", "[-1, batch, 64]"));
}

TEST(ShapeFolding, AllowZeroReshapeNeverGetsACopyEntry) {
    GraphBuilder b("allowzero");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    ValueId y = b.op("Reshape", {x, b.op("Concat", {dimOf(b, s, 0), dimOf(b, s, 1), b.ints("c88", {8, 8})},
                                         {Attribute::makeInt("axis", 0)})},
                     {Attribute::makeInt("allowzero", 1)});
    b.output(y);
    Model m = b.finish();
    const NodeId reshape = producer(m, y);
    runAndCompare(m, {"shape-chain-folding", "dce"});
    // With allowzero a 0 would mean an empty dim: two symbolic entries, so the target stays.
    EXPECT_TRUE(constantTarget(m, reshape).empty());
}

TEST(ShapeFolding, IntegerResultKnownWhateverTheDimsFolds) {
    GraphBuilder b("last_dim");
    ValueId x = tokens(b);
    // Gather(Shape(x), -1) is 64 for every batch and seq; (64 + 2) / 3 * 2 = 44 too.
    ValueId last = b.op("Gather", {b.op("Shape", {x}), scalarInt(b, "minus1", -1)});
    ValueId split = b.op("Mul", {b.op("Div", {b.op("Add", {last, scalarInt(b, "two", 2)}), scalarInt(b, "three", 3)}),
                                 scalarInt(b, "two2", 2)});
    ValueId y = b.op("Slice", {x, b.ints("starts", {0}), b.op("Unsqueeze", {split, b.ints("ax", {0})}), b.ints("axes", {2})});
    b.output(y);
    Model m = b.finish();
    auto r = runAndCompare(m, {"shape-chain-folding", "dce"});
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.count("Shape"), 0u);
    EXPECT_EQ(counts.count("Div"), 0u);
    EXPECT_EQ(counts.at("Slice"), 1);
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "fold-known-values"));
    EXPECT_EQ(m.graph.value(y).type.shape->toString(), "batchxseqx44");
}

TEST(ShapeFolding, ExpandToTheInputsOwnSymbolicShapeIsRemovedOthersStay) {
    GraphBuilder b("expand");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    ValueId same = b.op("Expand", {x, s});
    ValueId bias = b.inputSymbolic("bias", DataType::Float, {Dim::of(1), Dim::symbol("seq"), Dim::of(64)});
    ValueId grown = b.op("Expand", {bias, s});  // 1 → batch: a real broadcast
    b.output(b.op("Add", {same, grown}));
    Model m = b.finish();
    auto r = runAndCompare(m, {"shape-chain-folding", "dce"});
    EXPECT_EQ(test::opCounts(m.graph).at("Expand"), 1);
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "expand-noop-symbolic"));
}

TEST(ShapeFolding, DropoutWithRatioZeroIsRemovedEvenInTrainingMode) {
    GraphBuilder b("dropout");
    ValueId x = tokens(b);
    ValueId yes = b.constant("training", makeTensorOf<uint8_t>(DataType::Bool, {}, std::vector<uint8_t>{1}));
    ValueId zero = b.constant("ratio0", makeTensorOf<float>(DataType::Float, {}, std::vector<float>{0.f}));
    ValueId tenth = b.constant("ratio1", makeTensorOf<float>(DataType::Float, {}, std::vector<float>{0.1f}));
    ValueId kept = b.opMulti("Dropout", {x, zero, yes}, 2)[0];
    ValueId random = b.opMulti("Dropout", {x, tenth, yes}, 2)[0];
    b.output(b.op("Relu", {kept}));
    b.output(b.op("Relu", {random}));
    Model m = b.finish();
    auto r = test::runPassOnce("algebraic", m);
    EXPECT_EQ(test::opCounts(m.graph).at("Dropout"), 1);
    bool missed = false;
    for (const auto& rm : r.remarks) missed |= rm.kind == passes::RemarkKind::Missed && rm.message.find("training mode") != std::string::npos;
    EXPECT_TRUE(missed) << "the Dropout with ratio 0.1 stays, and says why";
}

TEST(ShapeFolding, EqualSymbolicValuesFromDifferentShapesAreComputedOnce) {
    // seq gathered from the tokens and again from a [batch, seq, 64] activation: one value.
    GraphBuilder b("value_numbering");
    ValueId ids = b.inputSymbolic("ids", DataType::Int64, {Dim::symbol("batch"), Dim::symbol("seq")});
    ValueId x = tokens(b);
    ValueId seqA = dimOf(b, b.op("Shape", {ids}), 1);
    ValueId seqB = dimOf(b, b.op("Shape", {b.op("Relu", {x})}), 1);
    ValueId maskA = b.op("ConstantOfShape", {b.op("Concat", {seqA, seqA}, {Attribute::makeInt("axis", 0)})});
    ValueId maskB = b.op("ConstantOfShape", {b.op("Concat", {seqB, seqB}, {Attribute::makeInt("axis", 0)})});
    b.output(b.op("Add", {maskA, maskB}));
    Model m = b.finish();
    auto r = runAndCompare(m, {"shape-chain-folding", "cse", "dce"});
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.at("Shape"), 1);
    EXPECT_EQ(counts.at("ConstantOfShape"), 1) << "equal fill values merge in CSE once the inputs are one value";
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "merge-equal-symbolic-values", "[seq]"));
}

TEST(ShapeFolding, ResizeSizesEqualToAnotherValuesShapeBecomeOneShape) {
    // DeepLab's pooling branch: Resize(pooled, [batch, 16] ++ [H', W'] of the feature map) reads
    // the feature map's own shape once the chain is seen to compute exactly that.
    GraphBuilder b("aspp_pool");
    ValueId image = b.inputSymbolic("image", DataType::Float, {Dim::symbol("batch"), Dim::of(16), Dim::symbol("h"), Dim::symbol("w")});
    ValueId aux = b.inputSymbolic("aux", DataType::Float, {Dim::symbol("batch"), Dim::of(8), Dim::symbol("h"), Dim::symbol("w")});
    ValueId feat = b.op("Relu", {image});
    ValueId pooled = b.op("GlobalAveragePool", {feat});
    ValueId fs = b.op("Shape", {aux});  // H', W' read from another branch's shape
    ValueId hw = b.op("Concat", {dimOf(b, fs, 2), dimOf(b, fs, 3)}, {Attribute::makeInt("axis", 0)});
    ValueId nc = b.op("Slice", {b.op("Shape", {pooled}), b.ints("s0", {0}), b.ints("s2", {2}), b.ints("a0", {0})});
    ValueId sizes = b.op("Concat", {nc, hw}, {Attribute::makeInt("axis", 0)});
    ValueId up = b.op("Resize", {pooled, b.constant("roi", makeTensorOf<float>(DataType::Float, {0}, {})),
                                 b.constant("scales", makeTensorOf<float>(DataType::Float, {0}, {})), sizes});
    b.output(b.op("Add", {feat, up}));
    b.output(b.op("Relu", {aux}));
    Model m = b.finish();
    auto r = runAndCompare(m, {"shape-chain-folding", "dce"});
    auto counts = test::opCounts(m.graph);
    EXPECT_EQ(counts.at("Shape"), 1);
    EXPECT_EQ(counts.count("Gather"), 0u);
    EXPECT_EQ(counts.count("Concat"), 0u);
    EXPECT_TRUE(hasRemark(r, passes::RemarkKind::Applied, "shape-of-equal-value"));
}
