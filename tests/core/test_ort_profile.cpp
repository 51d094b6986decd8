// The `onnxruntime` profile's fusions on small hand-built graphs: each ONNX Runtime rule's match
// (op type, domain, attributes, input order as ONNX Runtime writes them) and its refusal remarks
// (the condition, the node, the edge). ONNX Runtime's own output on the real exports is checked
// by tests/ort/ort_profile.js.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <limits>
#include <map>
#include <set>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include <nlohmann/json.hpp>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;

PassResult run(const std::string& pass, Model& m) { return test::runPassOnce(pass, m); }

const Node& onlyNode(const Model& m, const std::string& op) {
    for (NodeId n : m.graph.nodeOrder())
        if (m.graph.node(n).opType == op) return m.graph.node(n);
    throw std::runtime_error("no " + op + " node");
}

std::string inputName(const Model& m, const Node& n, size_t i) {
    return i < n.inputs.size() && n.inputs[i] != kNone ? m.graph.value(n.inputs[i]).name : "";
}

bool missed(const PassResult& r, const std::string& rule, const std::string& text) {
    return test::hasRemark(r, RemarkKind::Missed, rule, text);
}

/// The interpreter's outputs before and after a pass that leaves only standard ops.
void expectSameOutputs(const Model& before, const Model& after) {
    auto inputs = eval::randomInputs(before, 3);
    auto a = eval::run(before, inputs), b = eval::run(after, inputs);
    for (const auto& d : eval::compareOutputs(before, b, a, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name;
}

Model matmulAdd(std::vector<int64_t> aDims, bool symbolic = false, bool tap = false) {
    GraphBuilder b("mm", 17);
    ValueId a = symbolic ? b.inputSymbolic("a", DataType::Float, {Dim::symbol("batch"), Dim::of(4), Dim::of(8)})
                         : b.input("a", DataType::Float, aDims);
    ValueId y = b.op("MatMul", {a, b.constant("w", randomFloats({8, 3}, 1))}, {}, "mm");
    b.output(b.op("Add", {y, b.constant("bias", randomFloats({3}, 2))}, {}, "add"));
    if (tap) b.output(b.op("Neg", {y}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(OrtProfile, PipelineFollowsOnnxRuntimeOrder) {
    const auto basic = ort::profilePipeline(Level::Basic), extended = ort::profilePipeline(Level::Extended);
    ASSERT_FALSE(basic.empty());
    EXPECT_EQ(std::vector<std::string>(extended.begin(), extended.begin() + long(basic.size())), basic);
    auto at = [&](const std::string& p) { return std::find(extended.begin(), extended.end(), p) - extended.begin(); };
    // graph_transformer_utils.cc: ConvActivation before Gelu, MatmulTranspose before SkipLayerNorm
    // before QuickGelu before MatMulScale; MatMulAdd is Level1.
    EXPECT_LT(at("ort-conv-activation"), at("ort-gelu"));
    EXPECT_LT(at("ort-matmul-transpose"), at("ort-skip-layer-norm"));
    EXPECT_LT(at("ort-skip-layer-norm"), at("ort-quick-gelu"));
    EXPECT_LT(at("ort-quick-gelu"), at("ort-matmul-scale"));
    EXPECT_NE(std::find(basic.begin(), basic.end(), "ort-matmul-add"), basic.end());
    for (const auto& p : extended) EXPECT_TRUE(PassRegistry::global().contains(p)) << p;
    EXPECT_EQ(ort::profileLevelOf("ort-skip-layer-norm"), "onnxruntime extended");
    EXPECT_EQ(ort::profileLevelOf("algebraic"), "");
}

TEST(OrtProfile, MatMulAddFusionTwoD) {
    Model m = matmulAdd({4, 8});
    const Model before = m;
    run("ort-matmul-add", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Gemm", 1}}));
    const Node& gemm = onlyNode(m, "Gemm");
    EXPECT_EQ(inputName(m, gemm, 0), "a");
    EXPECT_EQ(inputName(m, gemm, 1), "w");
    EXPECT_EQ(inputName(m, gemm, 2), "bias");
    expectSameOutputs(before, m);
}

TEST(OrtProfile, MatMulAddFusionReshapesAStaticNdInput) {
    Model m = matmulAdd({2, 4, 8});
    const Model before = m;
    PassResult r = run("ort-matmul-add", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Gemm", 1}, {"Reshape", 2}}));
    EXPECT_NE(test::remarkText(r, RemarkKind::Applied).find("[2, 4, 8] → [8, 8]"), std::string::npos);
    expectSameOutputs(before, m);
}

TEST(OrtProfile, MatMulAddFusionRefusals) {
    Model dyn = matmulAdd({}, true);
    PassResult r = run("ort-matmul-add", dyn);
    EXPECT_EQ(opCounts(dyn.graph).count("Gemm"), 0u);
    EXPECT_TRUE(missed(r, "MatMulAddFusion", "the Reshapes around a Gemm need every dim concrete")) << test::remarkText(r, RemarkKind::Missed);
    EXPECT_TRUE(missed(r, "MatMulAddFusion", "`a`"));

    Model tapped = matmulAdd({4, 8}, false, true);
    r = run("ort-matmul-add", tapped);
    EXPECT_EQ(opCounts(tapped.graph).count("Gemm"), 0u);
    EXPECT_TRUE(missed(r, "MatMulAddFusion", "is read by 2 nodes (`add`, `tap`)")) << test::remarkText(r, RemarkKind::Missed);
}

namespace {

Model skipLayerNorm(std::vector<int64_t> dims, bool secondReader) {
    GraphBuilder b("sln", 17);
    ValueId x = b.input("x", DataType::Float, dims), skip = b.input("skip", DataType::Float, dims);
    ValueId sum = b.op("Add", {x, skip}, {}, "residual");
    const int64_t h = dims.back();
    b.output(b.op("LayerNormalization", {sum, b.constant("gamma", randomFloats({h}, 1)), b.constant("beta", randomFloats({h}, 2))},
                  {Attribute::makeFloat("epsilon", 1e-6f), Attribute::makeInt("axis", -1)}, "ln_2"));
    if (secondReader) b.output(b.op("Relu", {sum}, {}, "next_block"));
    return b.finish();
}

}  // namespace

TEST(OrtProfile, SkipLayerNormFusion) {
    Model m = skipLayerNorm({2, 5, 8}, false);
    PassResult r = run("ort-skip-layer-norm", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"SkipLayerNormalization", 1}}));
    const Node& sln = onlyNode(m, "SkipLayerNormalization");
    EXPECT_EQ(sln.domain, "com.microsoft");
    EXPECT_EQ((std::vector<std::string>{inputName(m, sln, 0), inputName(m, sln, 1), inputName(m, sln, 2), inputName(m, sln, 3)}),
              (std::vector<std::string>{"x", "skip", "gamma", "beta"}));
    EXPECT_FLOAT_EQ(sln.attrFloat("epsilon", 0), 1e-6f);
    bool imported = false;
    for (const auto& o : m.opsetImports) imported |= o.domain == "com.microsoft" && o.version == 1;
    EXPECT_TRUE(imported);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "SkipLayerNormFusion", "`residual` + `ln_2`"));
}

TEST(OrtProfile, SkipLayerNormFusionRefusals) {
    Model twoReaders = skipLayerNorm({2, 5, 8}, true);
    PassResult r = run("ort-skip-layer-norm", twoReaders);
    EXPECT_EQ(opCounts(twoReaders.graph).count("SkipLayerNormalization"), 0u);
    EXPECT_TRUE(missed(r, "SkipLayerNormFusion", "not applied at `ln_2`: the Add output `residual_out` is read by 2 nodes"))
        << test::remarkText(r, RemarkKind::Missed);

    Model flat = skipLayerNorm({5, 8}, false);
    r = run("ort-skip-layer-norm", flat);
    EXPECT_EQ(opCounts(flat.graph).count("SkipLayerNormalization"), 0u);
    EXPECT_TRUE(missed(r, "SkipLayerNormFusion", "needs both 3-D")) << test::remarkText(r, RemarkKind::Missed);
}

namespace {

/// 0.5·x·(1 + erf(x/√2)) as torch writes it.
Model erfGelu(int64_t opset) {
    GraphBuilder b("gelu", opset);
    ValueId x = b.input("x", DataType::Float, {2, 8});
    ValueId e = b.op("Erf", {b.op("Div", {x, b.scalar("sqrt2", float(M_SQRT2))}, {}, "div")}, {}, "erf");
    ValueId one = b.op("Add", {e, b.scalar("one", 1.0f)}, {}, "add");
    b.output(b.op("Mul", {b.op("Mul", {x, b.scalar("half", 0.5f)}, {}, "half_x"), one}, {}, "mul"));
    return b.finish();
}

}  // namespace

TEST(OrtProfile, GeluFusionLevels) {
    Model m = erfGelu(17);
    run("ort-gelu", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Gelu", 1}}));
    EXPECT_EQ(onlyNode(m, "Gelu").domain, "com.microsoft");

    Model basic17 = erfGelu(17);
    PassResult r = run("ort-gelu-basic", basic17);
    EXPECT_EQ(opCounts(basic17.graph).count("Gelu"), 0u);
    EXPECT_TRUE(missed(r, "GeluFusion (basic)", "fuses only into ONNX Gelu (opset 20)")) << test::remarkText(r, RemarkKind::Missed);

    Model basic20 = erfGelu(20);
    run("ort-gelu-basic", basic20);
    EXPECT_EQ(opCounts(basic20.graph), (std::map<std::string, int>{{"Gelu", 1}}));
    EXPECT_EQ(onlyNode(basic20, "Gelu").domain, "");
}

TEST(OrtProfile, QuickGeluFusionAndRefusal) {
    GraphBuilder b("silu", 17);
    ValueId x = b.input("x", DataType::Float, {2, 8});
    b.output(b.op("Mul", {x, b.op("Sigmoid", {x}, {}, "sig")}, {}, "swish"));
    Model m = b.finish();
    run("ort-quick-gelu", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"QuickGelu", 1}}));
    EXPECT_FLOAT_EQ(onlyNode(m, "QuickGelu").attrFloat("alpha", 0), 1.0f);

    GraphBuilder b2("silu_tap", 17);
    ValueId x2 = b2.input("x", DataType::Float, {2, 8});
    ValueId s = b2.op("Sigmoid", {x2}, {}, "sig");
    b2.output(b2.op("Mul", {x2, s}, {}, "swish"));
    b2.output(b2.op("Neg", {s}, {}, "tap"));
    Model tapped = b2.finish();
    PassResult r = run("ort-quick-gelu", tapped);
    EXPECT_EQ(opCounts(tapped.graph).count("QuickGelu"), 0u);
    EXPECT_TRUE(missed(r, "QuickGeluFusion", "not applied at `sig`: its output is read by 2 nodes")) << test::remarkText(r, RemarkKind::Missed);
}

TEST(OrtProfile, ConvActivationFusionAndRefusal) {
    GraphBuilder b("conv", 17);
    ValueId x = b.input("x", DataType::Float, {1, 3, 6, 6});
    ValueId y = b.op("Conv", {x, b.constant("w", randomFloats({4, 3, 3, 3}, 1)), b.constant("b", randomFloats({4}, 2))},
                     {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
    b.output(b.op("HardSigmoid", {y}, {Attribute::makeFloat("alpha", 0.25f)}, "act"));
    Model m = b.finish();
    run("ort-conv-activation", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"FusedConv", 1}}));
    const Node& fc = onlyNode(m, "FusedConv");
    EXPECT_EQ(fc.domain, "com.microsoft");
    EXPECT_EQ(fc.attrString("activation", ""), "HardSigmoid");
    ASSERT_NE(fc.attr("activation_params"), nullptr);
    EXPECT_EQ(fc.attr("activation_params")->floats, (std::vector<float>{0.25f, 0.5f}));
    EXPECT_EQ(fc.attrInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    EXPECT_EQ(inputName(m, fc, 2), "b");

    GraphBuilder b2("conv_tap", 17);
    ValueId x2 = b2.input("x", DataType::Float, {1, 3, 6, 6});
    ValueId y2 = b2.op("Conv", {x2, b2.constant("w", randomFloats({4, 3, 3, 3}, 1))}, {}, "conv");
    b2.output(b2.op("Relu", {y2}, {}, "relu"));
    b2.output(b2.op("Neg", {y2}, {}, "tap"));
    Model tapped = b2.finish();
    PassResult r = run("ort-conv-activation", tapped);
    EXPECT_EQ(opCounts(tapped.graph).count("FusedConv"), 0u);
    EXPECT_TRUE(missed(r, "ConvActivationFusion", "`conv` + `relu`: the Conv output is read by 2 nodes")) << test::remarkText(r, RemarkKind::Missed);
}

TEST(OrtProfile, GemmActivationFusion) {
    GraphBuilder b("gemm", 17);
    ValueId x = b.input("x", DataType::Float, {2, 8});
    ValueId y = b.op("Gemm", {x, b.constant("w", randomFloats({8, 3}, 1)), b.constant("c", randomFloats({3}, 2))}, {}, "gemm");
    b.output(b.op("LeakyRelu", {y}, {Attribute::makeFloat("alpha", 0.1f)}, "act"));
    Model m = b.finish();
    run("ort-gemm-activation", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"FusedGemm", 1}}));
    const Node& fg = onlyNode(m, "FusedGemm");
    EXPECT_EQ(fg.attrString("activation", ""), "LeakyRelu");
    EXPECT_FLOAT_EQ(fg.attrFloat("activation_alpha", 0), 0.1f);
}

TEST(OrtProfile, MatMulScaleAndTransposeFusions) {
    GraphBuilder b("attn_scores", 17);
    ValueId q = b.input("q", DataType::Float, {4, 5, 8}), k = b.input("k", DataType::Float, {4, 5, 8});
    ValueId kt = b.op("Transpose", {k}, {Attribute::makeInts("perm", {0, 2, 1})}, "kt");
    ValueId qs = b.op("Div", {q, b.scalar("scale", 4.0f)}, {}, "qscale");
    b.output(b.op("MatMul", {qs, kt}, {}, "scores"));
    Model m = b.finish();
    run("ort-matmul-transpose", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Div", 1}, {"FusedMatMul", 1}}));
    EXPECT_EQ(onlyNode(m, "FusedMatMul").attrInt("transB", 0), 1);
    EXPECT_EQ(onlyNode(m, "FusedMatMul").attrInt("transBatchB", 1), 0);
    run("ort-matmul-scale", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"FusedMatMul", 1}}));
    const Node& fm = onlyNode(m, "FusedMatMul");
    EXPECT_FLOAT_EQ(fm.attrFloat("alpha", 0), 0.25f);
    EXPECT_EQ(fm.attrInt("transB", 0), 1);
    EXPECT_EQ(inputName(m, fm, 0), "q");
    EXPECT_EQ(inputName(m, fm, 1), "k");
}

TEST(OrtProfile, GatherSliceToSplitFusion) {
    GraphBuilder b("qkv", 17);
    ValueId x = b.input("x", DataType::Float, {3, 2, 4});
    ValueId qkv = b.op("Relu", {x}, {}, "qkv");
    for (int i = 0; i < 3; ++i) {
        GraphBuilder& bb = b;
        ValueId idx = bb.constant("i" + std::to_string(i), makeTensorOf(DataType::Int64, {}, std::vector<int64_t>{i}));
        bb.output(bb.op("Gather", {qkv, idx}, {Attribute::makeInt("axis", 0)}, "g" + std::to_string(i)));
    }
    Model m = b.finish();
    const Model before = m;
    run("ort-gather-slice-to-split", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Relu", 1}, {"Split", 1}, {"Squeeze", 3}}));
    expectSameOutputs(before, m);

    // Two Gathers of three positions do not cover the axis: refused with the reason.
    GraphBuilder b2("partial", 17);
    ValueId x2 = b2.op("Relu", {b2.input("x", DataType::Float, {3, 2})}, {}, "src");
    for (int i = 0; i < 2; ++i)
        b2.output(b2.op("Gather", {x2, b2.constant("j" + std::to_string(i), makeTensorOf(DataType::Int64, {}, std::vector<int64_t>{i}))},
                        {}, "h" + std::to_string(i)));
    Model partial = b2.finish();
    PassResult r = run("ort-gather-slice-to-split", partial);
    EXPECT_EQ(opCounts(partial.graph).count("Split"), 0u);
    EXPECT_TRUE(missed(r, "GatherSliceToSplitFusion", "do not cover all 3 positions of axis 0")) << test::remarkText(r, RemarkKind::Missed);
}

TEST(OrtProfile, SimplifiedLayerNormFusion) {
    GraphBuilder b("rms", 17);
    ValueId x = b.input("x", DataType::Float, {2, 5, 8});
    ValueId p = b.op("Pow", {x, b.scalar("two", 2.0f)}, {}, "pow");
    ValueId mean = b.op("ReduceMean", {p}, {Attribute::makeInts("axes", {-1})}, "mean");
    ValueId s = b.op("Sqrt", {b.op("Add", {mean, b.scalar("eps", 1e-6f)}, {}, "add_eps")}, {}, "sqrt");
    b.output(b.op("Mul", {b.op("Div", {x, s}, {}, "div"), b.constant("w", randomFloats({8}, 3))}, {}, "scale"));
    Model m = b.finish();
    run("ort-simplified-layer-norm", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"SimplifiedLayerNormalization", 1}}));
    const Node& n = onlyNode(m, "SimplifiedLayerNormalization");
    EXPECT_EQ(n.domain, "");
    EXPECT_FLOAT_EQ(n.attrFloat("epsilon", 0), 1e-6f);
    EXPECT_EQ(n.attrInt("axis", 0), -1);
    EXPECT_EQ(inputName(m, n, 1), "w");
}

TEST(OrtProfile, AttentionFusionNamesTheAnchorCondition) {
    // Pre-LN block: LayerNormalization read once (by the packed QKV MatMul), ONNX's opset-17 schema.
    GraphBuilder b("attn", 17);
    ValueId x = b.input("x", DataType::Float, {1, 5, 8});
    ValueId ln = b.op("LayerNormalization", {x, b.constant("g", randomFloats({8}, 1)), b.constant("be", randomFloats({8}, 2))},
                      {Attribute::makeInt("axis", -1)}, "ln_1");
    ValueId qk = b.op("MatMul", {ln, b.constant("wq", randomFloats({8, 8}, 3))}, {}, "q_proj");
    ValueId scores = b.op("MatMul", {qk, b.op("Transpose", {qk}, {Attribute::makeInts("perm", {0, 2, 1})}, "kt")}, {}, "scores");
    ValueId probs = b.op("Softmax", {scores}, {Attribute::makeInt("axis", -1)}, "softmax");
    b.output(b.op("MatMul", {probs, qk}, {}, "context"));
    Model m = b.finish();
    PassResult r = run("ort-attention", m);
    EXPECT_FALSE(r.changed);
    EXPECT_TRUE(missed(r, "AttentionFusion", "attention block of `softmax`: the output of `ln_1` is read by 1 node (`q_proj`)"))
        << test::remarkText(r, RemarkKind::Missed);
    EXPECT_TRUE(missed(r, "AttentionFusion", "since opset 17"));
}

TEST(OrtProfile, InlinesHardSwish) {
    GraphBuilder b("hs", 17);
    b.output(b.op("HardSwish", {b.input("x", DataType::Float, {2, 8})}, {}, "hswish"));
    Model m = b.finish();
    const Model before = m;
    run("ort-inline-functions", m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"HardSigmoid", 1}, {"Mul", 1}}));
    expectSameOutputs(before, m);
}

TEST(OrtProfile, CliProfileOptions) {
    const std::string model = test::tempDir("cli") + "/mm.onnx";
    // No model needed to reject the options: they are checked before the file is read.
    auto r = test::runCli({"optimize", "missing.onnx", "-o", model, "--profile", "tensorrt"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown profile 'tensorrt'; valid profiles: standard, onnxruntime"), std::string::npos) << r.err;
    r = test::runCli({"optimize", "missing.onnx", "-o", model, "--profile", "onnxruntime", "--level", "all"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("levels basic and extended"), std::string::npos) << r.err;
    r = test::runCli({"explain", "missing.onnx", "--profile", "onnxruntime", "--node", "x"});
    EXPECT_EQ(r.exitCode, 2);
}

// ---- TransposeOptimizer, the transformer loop, Level1 eliminations -------------------------------

namespace {

Attribute perm(std::vector<int64_t> p) { return Attribute::makeInts("perm", std::move(p)); }

/// ConvNeXt's block end: NHWC → Transpose → Mul(γ) → Add(residual, itself a Transpose) → Transpose back.
Model transposeChain() {
    GraphBuilder b("tchain", 17);
    ValueId x = b.input("x", DataType::Float, {1, 4, 4, 8});
    ValueId r = b.input("r", DataType::Float, {1, 4, 4, 8});
    ValueId t = b.op("Transpose", {x}, {perm({0, 3, 1, 2})}, "t");
    ValueId res = b.op("Transpose", {r}, {perm({0, 3, 1, 2})}, "res");
    ValueId m = b.op("Mul", {b.constant("gamma", randomFloats({8, 1, 1}, 4)), t}, {}, "mul");
    ValueId a = b.op("Add", {m, res}, {}, "add");
    b.output(b.op("Transpose", {a}, {perm({0, 2, 3, 1})}, "back"));
    return b.finish();
}

}  // namespace

TEST(OrtProfile, TransposeOptimizerCancelsThroughBroadcastOps) {
    Model m = transposeChain();
    const Model before = m;
    const PassResult r = run("ort-transpose-optimizer", m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 0) << "the three Transposes cancel through Mul and Add";
    EXPECT_EQ(opCounts(m.graph)["Mul"], 1);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "TransposeOptimizer", "pushed through `mul`"));
    expectSameOutputs(before, m);
}

TEST(OrtProfile, TransposeOptimizerKeepsATransposeThatWouldNotCancel) {
    // Relu then a graph output: pushing costs the input's rank back on the output (cost 0).
    GraphBuilder b("keep", 17);
    ValueId t = b.op("Transpose", {b.input("x", DataType::Float, {2, 3, 4})}, {perm({0, 2, 1})}, "t");
    b.output(b.op("Relu", {t}, {}, "relu"));
    Model m = b.finish();
    const PassResult r = run("ort-transpose-optimizer", m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 1);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Missed, "TransposeOptimizer", "`t` stays above `relu`"));
}

TEST(OrtProfile, TransposeOptimizerPushesThroughScalarGather) {
    // Swin's qkv split: Transpose [2, 0, 3, 1, 4] then Gather(axis 0, scalar) → Gather on axis 2.
    GraphBuilder b("gather", 17);
    ValueId t = b.op("Transpose", {b.input("x", DataType::Float, {2, 5, 3, 4, 6})}, {perm({2, 0, 3, 1, 4})}, "t");
    ValueId idx = b.constant("i", int64Tensor({}, {1}));
    ValueId gq = b.op("Gather", {t, idx}, {Attribute::makeInt("axis", 0)}, "gather");
    b.output(b.op("Transpose", {gq}, {perm({0, 1, 3, 2})}, "kt"));
    Model m = b.finish();
    const Model before = m;
    run("ort-transpose-optimizer", m);
    EXPECT_EQ(onlyNode(m, "Gather").attrInt("axis", -1), 2);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 1) << "the pushed Transpose merges with the next one";
    expectSameOutputs(before, m);
}

TEST(OrtProfile, Level2LoopFoldsTheTransposeTheScaleHid) {
    // q·scale @ kᵀ: the first MatmulTransposeFusion step sees Mul, not the Transpose of q;
    // MatMulScaleFusion removes the Mul, the loop's next step folds q's Transpose (transBatchA).
    GraphBuilder b("loop", 17);
    ValueId q = b.op("Transpose", {b.input("q", DataType::Float, {5, 2, 4})}, {perm({1, 0, 2})}, "tq");
    ValueId k = b.op("Transpose", {b.input("k", DataType::Float, {5, 2, 4})}, {perm({1, 2, 0})}, "tk");
    ValueId s = b.op("Mul", {q, b.scalar("scale", 0.5f)}, {}, "scale");
    b.output(b.op("MatMul", {s, k}, {}, "mm"));
    Model m = b.finish();
    for (const char* p : {"ort-matmul-transpose", "ort-matmul-scale"}) run(p, m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 1) << "one step leaves q's Transpose";
    const PassResult r = run("ort-level2-repeat", m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 0);
    EXPECT_EQ(onlyNode(m, "FusedMatMul").attrInt("transBatchA", 0), 1);
    for (const auto& remark : r.remarks) EXPECT_NE(remark.kind, RemarkKind::Missed) << "the loop reports refusals once: " << remark.message;
}

TEST(OrtProfile, EliminateSliceOnlyFromZeroToInt64Max) {
    GraphBuilder b("slice", 17);
    ValueId x = b.input("x", DataType::Float, {4, 3});
    ValueId whole = b.op("Slice", {x, b.ints("s0", {0}), b.ints("e0", {std::numeric_limits<int64_t>::max()})}, {}, "whole");
    // Also the whole input, but by its size: ONNX Runtime does not read the shape.
    ValueId bySize = b.op("Slice", {whole, b.ints("s1", {0}), b.ints("e1", {4})}, {}, "by_size");
    b.output(b.op("Relu", {bySize}, {}, "relu"));
    Model m = b.finish();
    run("ort-level1-rules", m);
    EXPECT_EQ(opCounts(m.graph)["Slice"], 1);
    EXPECT_EQ(onlyNode(m, "Slice").name, "by_size");
}

TEST(OrtProfile, EliminateDropoutIgnoresTrainingMode) {
    // Swin's exports: Dropout(ratio 0, training_mode true); the inference build never reads it.
    GraphBuilder b("dropout", 17);
    ValueId x = b.input("x", DataType::Float, {2, 3});
    ValueId mode = b.constant("training_mode", makeTensorOf(DataType::Bool, {}, std::vector<uint8_t>{1}));
    ValueId d = b.op("Dropout", {x, b.scalar("ratio", 0.f), mode}, {}, "dropout");
    b.output(b.op("Relu", {d}, {}, "relu"));
    Model m = b.finish();
    const PassResult r = run("ort-level1-rules", m);
    EXPECT_EQ(opCounts(m.graph)["Dropout"], 0);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "EliminateDropout", "ignores training_mode"));
}

// ---- explain --profile onnxruntime on the committed exports: every refusal accounted for -------

namespace {

std::string fixture(const std::string& name) { return std::string(PASSLENS_FIXTURES_DIR) + "/" + name; }

/// The attention blocks of an export: each Softmax whose output reaches a MatMul (through a
/// Dropout or Cast at most), named by that Softmax.
std::multiset<std::string> attentionBlocks(const Model& m) {
    std::multiset<std::string> out;
    const Graph& g = m.graph;
    for (NodeId n : g.nodeOrder()) {
        if (g.node(n).opType != "Softmax") continue;
        std::vector<ValueId> frontier{g.node(n).outputs[0]};
        bool reachesMatMul = false;
        for (int hop = 0; hop < 2 && !reachesMatMul; ++hop) {
            std::vector<ValueId> next;
            for (ValueId v : frontier)
                for (NodeId c : g.value(v).consumers) {
                    const std::string& op = g.node(c).opType;
                    if (op == "MatMul") reachesMatMul = true;
                    if (op == "Dropout" || op == "Cast") next.push_back(g.node(c).outputs[0]);
                }
            frontier = next;
        }
        if (reachesMatMul) out.insert(g.node(n).name);
    }
    return out;
}

nlohmann::json explainOrt(const std::string& model) {
    const test::CliResult r = test::runCli({"explain", model, "--profile", "onnxruntime", "--json"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(r.out)["fusions"];
}

}  // namespace

TEST(OrtProfile, ExplainNamesTheAttentionConditionOfEveryBlock) {
    // ONNX Runtime 1.30 fuses no Attention in these exports (ort_profile.js checks its output has
    // none); explain must say, once per block, which condition failed and at which node.
    for (const char* file : {"vit_tiny_static.onnx", "transformer_encoder_static.onnx", "gpt_tiny_static.onnx"}) {
        SCOPED_TRACE(file);
        const Model m = onnxio::importModelFile(fixture(file));
        const std::multiset<std::string> blocks = attentionBlocks(m);
        ASSERT_GE(blocks.size(), 2u) << "each export has two attention layers";
        std::multiset<std::string> named;
        for (const auto& f : explainOrt(fixture(file))) {
            if (f["rule"] != "AttentionFusion") continue;
            EXPECT_FALSE(f["applied"].get<bool>()) << f["message"];
            const std::string message = f["message"];
            EXPECT_NE(message.find("not applied"), std::string::npos) << message;
            EXPECT_NE(message.find("ONNX Runtime"), std::string::npos) << "the condition is ONNX Runtime's: " << message;
            for (const auto& n : f["nodes"])
                if (blocks.count(n.get<std::string>())) named.insert(n.get<std::string>());
        }
        EXPECT_EQ(named, blocks) << "one AttentionFusion remark per attention block, naming its Softmax";
    }
}

TEST(OrtProfile, ExplainNamesEveryLayerNormOfTheVitLeftUnfused) {
    // The LayerNormalizations the extended profile leaves (ONNX Runtime's own output has the same
    // histogram, ort_profile.js) each have a SkipLayerNormFusion refusal naming them.
    const std::string model = fixture("vit_tiny_static.onnx");
    const std::string out = std::string(PASSLENS_TEST_TMP) + "/ort_vit_extended.onnx";
    const test::CliResult r = test::runCli({"optimize", model, "-o", out, "--profile", "onnxruntime", "--level", "extended"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Model optimized = onnxio::importModelFile(out);
    std::set<std::string> unfused;
    size_t skipNodes = 0;
    for (NodeId n : optimized.graph.nodeOrder()) {
        if (optimized.graph.node(n).opType == "LayerNormalization") unfused.insert(optimized.graph.node(n).name);
        skipNodes += optimized.graph.node(n).opType == "SkipLayerNormalization";
    }
    const std::map<std::string, int> exported = opCounts(onnxio::importModelFile(model).graph);
    EXPECT_EQ(unfused.size() + skipNodes, size_t(exported.at("LayerNormalization")));
    ASSERT_GE(unfused.size(), 1u);
    std::set<std::string> explained;
    size_t applied = 0;
    for (const auto& f : explainOrt(model)) {
        const std::string rule = f["rule"];
        if (rule.rfind("SkipLayerNormFusion", 0) != 0) continue;
        if (f["applied"].get<bool>()) {
            ++applied;
            continue;
        }
        for (const auto& n : f["nodes"])
            if (unfused.count(n.get<std::string>())) explained.insert(n.get<std::string>());
    }
    EXPECT_EQ(explained, unfused) << "every LayerNormalization ONNX Runtime leaves has the refusal that kept it";
    EXPECT_EQ(applied, skipNodes);
}

TEST(OrtProfile, DocsQuoteTheExplainOutput) {
    // docs/ort-attention-vit.md quotes `explain --profile onnxruntime` after a marker naming the
    // export; every quoted line must be a line the CLI prints today.
    std::ifstream page(std::string(PASSLENS_FIXTURES_DIR) + "/../../docs/ort-attention-vit.md");
    ASSERT_TRUE(page) << "docs/ort-attention-vit.md";
    std::string line, model;
    std::vector<std::string> quoted;
    bool inBlock = false;
    while (std::getline(page, line)) {
        if (line.rfind("<!-- explain: ", 0) == 0) {
            model = line.substr(14, line.find(" -->") - 14);
            continue;
        }
        if (!model.empty() && line.rfind("```", 0) == 0) {
            if (inBlock) break;
            inBlock = true;
            continue;
        }
        if (inBlock) quoted.push_back(line);
    }
    ASSERT_EQ(model, "vit_tiny_static.onnx");
    ASSERT_GE(quoted.size(), 3u);
    const test::CliResult r = test::runCli({"explain", fixture(model), "--profile", "onnxruntime"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::set<std::string> printed;
    std::istringstream out(r.out);
    while (std::getline(out, line)) printed.insert(line);
    for (const auto& q : quoted) EXPECT_TRUE(printed.count(q)) << "docs/ort-attention-vit.md quotes a line explain no longer prints:\n" << q;
}

TEST(OrtProfile, ConvMulFusionTakesPerChannelScalesOnly) {
    // ConvMulFusion folds B of shape [C, 1, 1]; a [1] scale (Paddle's per-tensor form) stays a Mul.
    auto model = [](std::vector<int64_t> bDims) {
        GraphBuilder b("convmul", 17);
        ValueId x = b.input("x", DataType::Float, {1, 2, 5, 5});
        ValueId c = b.op("Conv", {x, b.constant("w", randomFloats({4, 2, 3, 3}, 5)), b.constant("bias", randomFloats({4}, 6))},
                         {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
        int64_t n = 1;
        for (int64_t d : bDims) n *= d;
        ValueId m = b.op("Mul", {c, b.constant("scale", makeTensorOf(DataType::Float, bDims, std::vector<float>(size_t(n), 0.5f)))}, {}, "mul");
        b.output(b.op("Relu", {m}, {}, "relu"));
        return b.finish();
    };
    Model perChannel = model({4, 1, 1});
    const Model before = perChannel;
    run("ort-level1-rules", perChannel);
    EXPECT_EQ(opCounts(perChannel.graph)["Mul"], 0);
    expectSameOutputs(before, perChannel);
    Model perTensor = model({1});
    const PassResult r = run("ort-level1-rules", perTensor);
    EXPECT_EQ(opCounts(perTensor.graph)["Mul"], 1);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Missed, "ConvMulFusion", "has shape [1], ONNX Runtime needs [C, 1, 1] or a scalar"));
}

TEST(OrtProfile, FastGeluFusionBothFormulas) {
    // GPT-2's gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), with Pow (second formula) or
    // as x·0.044715·x (first formula).
    auto model = [](bool pow, bool tapTanh) {
        GraphBuilder b("fastgelu", 17);
        ValueId x = b.input("x", DataType::Float, {2, 8});
        ValueId inner;
        if (pow) {
            ValueId cube = b.op("Pow", {x, b.scalar("three", 3.f)}, {}, "pow");
            ValueId c = b.op("Mul", {cube, b.scalar("c", 0.044715f)}, {}, "mul_c");
            ValueId s = b.op("Add", {x, c}, {}, "add_x");
            inner = b.op("Mul", {s, b.scalar("k", 0.7978845834732056f)}, {}, "mul_k");
        } else {
            ValueId m1 = b.op("Mul", {x, b.scalar("c", 0.044715f)}, {}, "mul_c");
            ValueId m2 = b.op("Mul", {m1, x}, {}, "mul_x");
            ValueId a1 = b.op("Add", {m2, b.scalar("one1", 1.f)}, {}, "add_1");
            ValueId m4 = b.op("Mul", {x, b.scalar("k", 0.7978845834732056f)}, {}, "mul_k");
            inner = b.op("Mul", {a1, m4}, {}, "mul_inner");
        }
        ValueId t = b.op("Tanh", {inner}, {}, "tanh");
        if (tapTanh) b.output(b.op("Neg", {t}, {}, "tap"));
        ValueId a2 = b.op("Add", {t, b.scalar("one", 1.f)}, {}, "add_one");
        ValueId half = b.op("Mul", {x, b.scalar("half", 0.5f)}, {}, "half");
        // The GELU's Mul may not write a graph output (CheckNode), so a Relu reads it.
        b.output(b.op("Relu", {b.op("Mul", {half, a2}, {}, "gelu")}, {}, "relu"));
        return b.finish();
    };
    for (bool pow : {true, false}) {
        Model m = model(pow, false);
        run("ort-fast-gelu", m);
        EXPECT_EQ(opCounts(m.graph)["FastGelu"], 1) << (pow ? "Pow form" : "Mul form");
        EXPECT_EQ(m.graph.nodeCount(), 2u);
        EXPECT_EQ(onlyNode(m, "FastGelu").domain, "com.microsoft");
    }
    Model tapped = model(true, true);
    const PassResult r = run("ort-fast-gelu", tapped);
    EXPECT_EQ(opCounts(tapped.graph)["FastGelu"], 0);
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Missed, "FastGeluFusion", "does not go into a Tanh read once"));
}

namespace {

/// x [1, 3, 4, 8] → Reshape to Concat(Shape(x)[0:2], [-1]) = [1, 3, 32] (a computed target) →
/// Transpose [0, 2, 1] → the mean-subtraction of a layer norm (ReduceMean, Sub) → (x - mean) · 1.
/// PassLens's shape engine knows every dim after the Reshape; ONNX Runtime's inference knows none
/// at opset < 13 (Reshape-5 has no rank inference) and the rank with later opsets.
Model computedReshapeThenNorm(int64_t opset) {
    GraphBuilder b("computed_reshape", opset);
    ValueId x = b.input("x", DataType::Float, {1, 3, 4, 8});
    ValueId shape = b.op("Shape", {x}, {}, "shape");
    ValueId head = opset < 10 ? b.op("Slice", {shape}, {Attribute::makeInts("starts", {0}), Attribute::makeInts("ends", {2}), Attribute::makeInts("axes", {0})}, "head")
                              : b.op("Slice", {shape, b.ints("s", {0}), b.ints("e", {2}), b.ints("a", {0})}, {}, "head");
    ValueId target = b.op("Concat", {head, b.ints("rest", {-1})}, {Attribute::makeInt("axis", 0)}, "target");
    ValueId r = b.op("Reshape", {x, target}, {}, "flatten");
    ValueId t = b.op("Transpose", {r}, {perm({0, 2, 1})}, "t");
    ValueId mean = b.op("ReduceMean", {t}, {Attribute::makeInts("axes", {-1}), Attribute::makeInt("keepdims", 1)}, "mean");
    ValueId centered = b.op("Sub", {t, mean}, {}, "sub");
    b.output(b.op("Mul", {centered, b.scalar("one", 1.0f)}, {}, "times_one"));
    return b.finish();
}

}  // namespace

TEST(OrtProfile, TransposeOptimizerCostUsesTheShapesOnnxRuntimeKnows) {
    // Opset 9: the Reshape's output has no shape for ONNX Runtime, so each transposed value
    // costs 5 and pushing the Transpose through ReduceMean gains nothing (PP-OCRv4 rec's
    // layer norms). From opset 13 the rank is known, the keepdims 1 is counted, and it moves.
    Model old = computedReshapeThenNorm(9);
    ASSERT_TRUE(old.graph.value(onlyNode(old, "Transpose").outputs[0]).type.shape) << "PassLens's own engine knows the shape";
    const PassResult r9 = run("ort-transpose-optimizer", old);
    EXPECT_EQ(inputName(old, onlyNode(old, "ReduceMean"), 0), "t_out") << "the Transpose stays above the ReduceMean";
    EXPECT_TRUE(missed(r9, "TransposeOptimizer", "`t` stays above `mean`: pushing it through would not reduce the transposed dims (cost 0"));

    Model newer = computedReshapeThenNorm(13);
    const Model before = newer;
    const PassResult r13 = run("ort-transpose-optimizer", newer);
    EXPECT_TRUE(test::hasRemark(r13, RemarkKind::Applied, "TransposeOptimizer", "pushed through `mean`"));
    EXPECT_EQ(inputName(newer, onlyNode(newer, "ReduceMean"), 0), "flatten_out");
    EXPECT_EQ(opCounts(newer.graph)["Transpose"], 1);
    expectSameOutputs(before, newer);
}

TEST(OrtProfile, NoopEliminationNeedsTheShapeOnnxRuntimeKnows) {
    // Mul by 1 goes only when ONNX Runtime knows the other input's shape (noop_elimination.cc).
    Model old = computedReshapeThenNorm(9);
    run("ort-level1-rules", old);
    EXPECT_EQ(opCounts(old.graph)["Mul"], 1) << "opset 9: the Sub's output has no shape for ONNX Runtime";
    Model newer = computedReshapeThenNorm(13);
    const Model before = newer;
    run("ort-level1-rules", newer);
    EXPECT_EQ(opCounts(newer.graph)["Mul"], 0);
    expectSameOutputs(before, newer);
}

TEST(OrtProfile, TransposeOptimizerPushesThroughSliceOne) {
    // Opset 9 Slice takes starts/ends/axes as attributes: the Transpose moves below it, the
    // Squeeze after it, and merges with the next Transpose (PP-OCRv4 rec's key path).
    GraphBuilder b("slice1", 9);
    ValueId t = b.op("Transpose", {b.input("x", DataType::Float, {2, 5, 3, 4, 6})}, {perm({2, 0, 3, 1, 4})}, "t");
    ValueId s = b.op("Slice", {t}, {Attribute::makeInts("starts", {1}), Attribute::makeInts("ends", {2}), Attribute::makeInts("axes", {0})}, "slice");
    ValueId k = b.op("Squeeze", {s}, {Attribute::makeInts("axes", {0})}, "squeeze");
    b.output(b.op("Transpose", {k}, {perm({0, 1, 3, 2})}, "kt"));
    Model m = b.finish();
    const Model before = m;
    run("ort-transpose-optimizer", m);
    EXPECT_EQ(onlyNode(m, "Slice").attrInts("axes"), std::vector<int64_t>{2});
    EXPECT_EQ(inputName(m, onlyNode(m, "Slice"), 0), "x");
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 1) << "the pushed Transpose merges with the next one";
    expectSameOutputs(before, m);
}

TEST(OrtProfile, ReshapeFusionKeepsAConstantZeroAndOneComputedEntry) {
    // Target Concat([0], Shape(y)[2:3], [3]): the 0 copies x's dim, the one-element entry is -1.
    GraphBuilder b("reshape_zero", 13);
    ValueId x = b.input("x", DataType::Float, {2, 3, 4});
    ValueId y = b.input("y", DataType::Float, {5, 6, 4});
    ValueId dim = b.op("Slice", {b.op("Shape", {y}, {}, "shape"), b.ints("s", {2}), b.ints("e", {3})}, {}, "dim");
    ValueId target = b.op("Concat", {b.ints("zero", {0}), dim, b.ints("three", {3})}, {Attribute::makeInt("axis", 0)}, "target");
    b.output(b.op("Reshape", {x, target}, {}, "reshape"));
    Model m = b.finish();
    const Model before = m;
    const PassResult r = run("ort-reshape-fusion", m);
    const TensorPtr t = match::constantOf(m.graph, onlyNode(m, "Reshape").inputs[1]);
    ASSERT_TRUE(t) << "the target is a constant";
    EXPECT_EQ(std::vector<int64_t>(t->as<int64_t>(), t->as<int64_t>() + t->elementCount()), (std::vector<int64_t>{0, -1, 3}));
    EXPECT_TRUE(test::hasRemark(r, RemarkKind::Applied, "ReshapeFusion", "[0, -1, 3]"));
    expectSameOutputs(before, m);

    // Two entries that are not constants: only one may be -1.
    GraphBuilder b2("reshape_two", 13);
    ValueId x2 = b2.input("x", DataType::Float, {2, 3, 4});
    ValueId y2 = b2.input("y", DataType::Float, {5, 3, 4});
    ValueId shape2 = b2.op("Shape", {y2}, {}, "shape");
    ValueId d1 = b2.op("Slice", {shape2, b2.ints("s1", {1}), b2.ints("e1", {2})}, {}, "d1");
    ValueId d2 = b2.op("Slice", {shape2, b2.ints("s2", {2}), b2.ints("e2", {3})}, {}, "d2");
    ValueId target2 = b2.op("Concat", {b2.ints("two", {2}), d1, d2}, {Attribute::makeInt("axis", 0)}, "target");
    b2.output(b2.op("Reshape", {x2, target2}, {}, "reshape"));
    Model m2 = b2.finish();
    const PassResult r2 = run("ort-reshape-fusion", m2);
    EXPECT_EQ(opCounts(m2.graph)["Concat"], 1);
    EXPECT_TRUE(missed(r2, "ReshapeFusion", "2 of its entries are neither a constant nor the input's dim"));
}

TEST(OrtProfile, LoopBodyReadsOuterScopeShapesAndConstants) {
    // scripted_rnn_loop's body: MatMul(h, W) + Add with W an initializer of the main graph (its
    // shape is the outer NodeArg's) becomes Gemm, and the Identity returning the main graph's
    // constant condition is folded into the body's own initializer, as ONNX Runtime does.
    Model m = onnxio::importModelFile(std::string(PASSLENS_FIXTURES_DIR) + "/scripted_rnn_loop_static.onnx");
    const Model before = m;
    auto bodyOf = [](const Model& model) -> const Graph& {
        for (NodeId n : model.graph.nodeOrder())
            if (model.graph.node(n).opType == "Loop") return *model.graph.node(n).attr("body")->g;
        throw std::runtime_error("no Loop");
    };
    ASSERT_EQ(opCounts(bodyOf(m))["MatMul"], 1);
    ASSERT_EQ(opCounts(bodyOf(m))["Identity"], 1);
    PassManager pm;
    for (const auto& p : ort::profilePipeline(Level::Basic)) pm.addPass(p);
    PipelineOptions options;
    options.keepSnapshots = false;
    pm.run(m, options);
    const Graph& after = bodyOf(m);
    EXPECT_EQ(opCounts(after)["MatMul"], 0);
    EXPECT_EQ(opCounts(after)["Gemm"], 2);
    EXPECT_EQ(opCounts(after)["Identity"], 0);
    expectSameOutputs(before, m);
}
