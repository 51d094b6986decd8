// Decomposed LayerNorm → LayerNormalization: the exporter variants, the opset gate, and the traps
// (keepdims=0, γ of the wrong shape, axes as an input, an intermediate with a second reader), each
// with op counts, remark text and numerical equivalence.
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

/// Runs the pass, checks outputs within 1e-4 of the original and checker-cleanliness.
PassResult runAndCompare(Model& m, const std::string& pass = "fuse-layer-norm") {
    return test::runChecked(m, pass, test::fusionCheckOptions(7)).result;
}

struct LnOptions {
    int64_t opset = 17;
    bool mulSquare = false;      // d·d instead of Pow(d, 2)
    bool twoSubs = false;        // a separate Sub for each branch
    bool gammaFirst = false;     // Mul(γ, n)
    bool withBeta = true;
    int64_t keepdims = 1;
    bool axesAsInput = false;
    std::vector<int64_t> gammaDims{8};
    bool tapSqrt = false;        // a second reader of sqrt(v + ε)
    std::vector<int64_t> xDims{2, 4, 8};
};

Model decomposedLayerNorm(const LnOptions& o) {
    GraphBuilder b("layer_norm", o.opset);
    auto x = b.input("x", DataType::Float, o.xDims);
    std::vector<Attribute> reduceAttrs;
    std::vector<ValueId> axesInput;
    if (o.axesAsInput) axesInput.push_back(b.ints("axes", {-1}));
    else reduceAttrs.push_back(Attribute::makeInts("axes", {-1}));
    if (o.keepdims != 1) reduceAttrs.push_back(Attribute::makeInt("keepdims", o.keepdims));
    auto reduce = [&](ValueId in, const std::string& name) {
        std::vector<ValueId> ins{in};
        ins.insert(ins.end(), axesInput.begin(), axesInput.end());
        return b.op("ReduceMean", ins, reduceAttrs, name);
    };
    auto mu = reduce(x, "mean");
    auto d = b.op("Sub", {x, mu}, {}, "sub");
    auto sq = o.mulSquare ? b.op("Mul", {d, d}, {}, "square") : b.op("Pow", {d, b.scalar("two", 2.f)}, {}, "square");
    auto var = reduce(sq, "var");
    auto ve = b.op("Add", {var, b.scalar("eps", 1e-5f)}, {}, "add_eps");
    auto sd = b.op("Sqrt", {ve}, {}, "sqrt");
    auto d2 = o.twoSubs ? b.op("Sub", {x, mu}, {}, "sub2") : d;
    auto n = b.op("Div", {d2, sd}, {}, "div");
    auto gamma = b.constant("gamma", randomFloats(o.gammaDims, 3, 0.5f, 1.5f));
    auto s = o.gammaFirst ? b.op("Mul", {gamma, n}, {}, "scale") : b.op("Mul", {n, gamma}, {}, "scale");
    auto y = o.withBeta ? b.op("Add", {s, b.constant("beta", randomFloats({8}, 4))}, {}, "shift") : s;
    b.output(b.op("Relu", {y}, {}, "relu"));
    if (o.tapSqrt) b.output(b.op("Neg", {sd}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(FusionLayerNorm, FusesNineNodesIntoLayerNormalization) {
    Model m = decomposedLayerNorm({});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"LayerNormalization", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("LayerNorm pattern at mean: 9 nodes fused into LayerNormalization (axis 2"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied);
    // The constants only the pattern read are gone (γ and β stay: the fused node reads them).
    EXPECT_FALSE(m.graph.findValue("eps").has_value());
    EXPECT_FALSE(m.graph.findValue("two").has_value());
    EXPECT_TRUE(m.graph.findValue("gamma").has_value());
    PassManager again;
    again.addPass("fuse-layer-norm");
    EXPECT_FALSE(again.run(m).steps.back().result.changed);
}

TEST(FusionLayerNorm, ExporterVariantsFuse) {
    for (LnOptions o : {LnOptions{.mulSquare = true}, LnOptions{.twoSubs = true}, LnOptions{.gammaFirst = true},
                        LnOptions{.withBeta = false}, LnOptions{.gammaDims = {1, 1, 8}}}) {
        Model m = decomposedLayerNorm(o);
        runAndCompare(m);
        EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 1);
        EXPECT_EQ(opCounts(m.graph).size(), 2u);
    }
}

TEST(FusionLayerNorm, BelowOpset17NamesTheOpsetNeeded) {
    Model m = decomposedLayerNorm({.opset = 13});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 0);
    EXPECT_EQ(m.graph.nodeCount(), 10u);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("LayerNormalization needs opset 17, the model has opset 13 (use --target-opset 17)"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionLayerNorm, KeepdimsZeroIsRefused) {
    Model m = decomposedLayerNorm({.keepdims = 0, .xDims = {8, 8, 8}});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 0);
    EXPECT_EQ(m.graph.nodeCount(), 10u);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("mean has keepdims=0"), std::string::npos) << remarkText(r, RemarkKind::Missed);
}

TEST(FusionLayerNorm, GammaOfAnotherShapeIsRefused) {
    Model m = decomposedLayerNorm({.gammaDims = {4, 8}});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("γ 'gamma' has shape [4, 8], not X.shape[axis:] = [8]"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionLayerNorm, ConstantAxesInputOfOpset18Fuses) {
    Model m = decomposedLayerNorm({.opset = 18, .axesAsInput = true});
    runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 1);
    EXPECT_EQ(opCounts(m.graph)["ReduceMean"], 0);
}

TEST(FusionLayerNorm, ComputedAxesInputIsRefused) {
    Model m = decomposedLayerNorm({.opset = 18, .axesAsInput = true});
    // The axes now come from a graph input: nothing says which axes they will be.
    const ValueId axes = *m.graph.findValue("axes");
    m.graph.setInitializer(axes, nullptr);
    std::vector<ValueId> inputs = m.graph.inputs();
    inputs.push_back(axes);
    m.graph.setInputs(inputs);
    PassManager pm;
    pm.addPass("fuse-layer-norm");
    PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("mean takes its axes from a computed input"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionLayerNorm, SecondReaderOfAnIntermediateIsRefusedAndNamed) {
    Model m = decomposedLayerNorm({.tapSqrt = true});
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["LayerNormalization"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("intermediate 'sqrt_out' of sqrt has 2 readers (div, tap)"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionLayerNorm, MeanWithoutTheVarianceBranchIsNoLayerNorm) {
    // x − mean(x) alone (centering) is no layer norm: nothing fused, nothing reported.
    GraphBuilder b("centering", 17);
    auto x = b.input("x", DataType::Float, {2, 4, 8});
    auto mu = b.op("ReduceMean", {x}, {Attribute::makeInts("axes", {-1})}, "mean");
    b.output(b.op("Sub", {x, mu}, {}, "sub"));
    Model m = b.finish();
    PassResult r = runAndCompare(m);
    EXPECT_FALSE(r.changed);
    EXPECT_TRUE(r.remarks.empty());
    EXPECT_EQ(m.graph.nodeCount(), 2u);
}

TEST(FusionLayerNorm, SymbolicShapeWithOneDimensionalGammaFuses) {
    // PP-OCR's rec head reaches its LayerNorms through dynamic reshapes: X's dims are unknown, and a
    // 1-D γ/β over the last axis fixes the normalized length.
    GraphBuilder b("layer_norm_dynamic", 17);
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::symbol("t"), Dim::symbol("c")});
    auto mu = b.op("ReduceMean", {x}, {Attribute::makeInts("axes", {-1})}, "mean");
    auto d = b.op("Sub", {x, mu}, {}, "sub");
    auto var = b.op("ReduceMean", {b.op("Pow", {d, b.scalar("two", 2.f)}, {}, "square")}, {Attribute::makeInts("axes", {-1})}, "var");
    auto sd = b.op("Sqrt", {b.op("Add", {var, b.scalar("eps", 1e-6f)}, {}, "add_eps")}, {}, "sqrt");
    auto n = b.op("Div", {d, sd}, {}, "div");
    auto y = b.op("Add", {b.op("Mul", {n, b.constant("gamma", randomFloats({8}, 3))}, {}, "scale"), b.constant("beta", randomFloats({8}, 4))},
                  {}, "shift");
    b.output(y);
    Model m = b.finish();
    const std::vector<std::pair<std::string, int64_t>> dims = {{"n", 2}, {"t", 3}, {"c", 8}};
    Model original = m;
    auto inputs = eval::randomInputs(m, 7, dims);
    eval::RunOptions ro;
    ro.dims = dims;
    auto before = eval::run(m, inputs, ro);
    PassManager pm;
    pm.addPass("fuse-layer-norm");
    PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"LayerNormalization", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("(axis 2, epsilon 1e-06)"), std::string::npos) << remarkText(r, RemarkKind::Applied);
    for (const auto& diff : eval::compareOutputs(original, eval::run(m, inputs, ro), before, 1e-4, 1e-5)) EXPECT_TRUE(diff.ok) << diff.maxAbs;
}
