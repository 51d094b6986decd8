// group-gelu / group-silu (level all): each GELU (erf, tanh) and x·Sigmoid(k·x) form becomes one
// call of a model-local function in passlens.fused, one function per distinct form and constants.
// Checked with op counts, the interpreter, the ONNX checker, idempotence, second-reader traps,
// groupIntoFunctions afterwards, the transformer_block example and PP-OCRv4 rec.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Examples.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"
#include "passes/fusion/GroupFunctions.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

PassResult runAndCompare(Model& m, const std::string& pass) {
    return test::runChecked(m, pass, test::fusionCheckOptions(21)).result;
}

/// x·0.5·(1 + erf(x/√2)) on `x`; `tap` adds a second reader of the Erf output.
ValueId erfGelu(GraphBuilder& b, ValueId x, const std::string& p, bool tap = false) {
    auto erf = b.op("Erf", {b.op("Div", {x, b.scalar(p + "sqrt2", 1.4142135f)}, {}, p + "div")}, {}, p + "erf");
    if (tap) b.output(b.op("Exp", {erf}, {}, p + "tap"));
    auto mulx = b.op("Mul", {x, b.op("Add", {erf, b.scalar(p + "one", 1.f)}, {}, p + "add1")}, {}, p + "mulx");
    return b.op("Mul", {mulx, b.scalar(p + "half", 0.5f)}, {}, p + "half_mul");
}

/// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), x³ as Pow(x, 3) or x·x·x.
ValueId tanhGelu(GraphBuilder& b, ValueId x, const std::string& p, bool powForm) {
    ValueId cube = powForm ? b.op("Pow", {x, b.scalar(p + "three", 3.f)}, {}, p + "pow")
                           : b.op("Mul", {b.op("Mul", {x, x}, {}, p + "sq"), x}, {}, p + "cube3");
    auto scaled = b.op("Mul", {cube, b.scalar(p + "c", 0.044715f)}, {}, p + "cube");
    auto inner = b.op("Mul", {b.op("Add", {x, scaled}, {}, p + "addc"), b.scalar(p + "s", 0.7978846f)}, {}, p + "scale");
    auto th = b.op("Tanh", {inner}, {}, p + "tanh");
    auto halfX = b.op("Mul", {x, b.scalar(p + "half", 0.5f)}, {}, p + "halfx");
    return b.op("Mul", {halfX, b.op("Add", {th, b.scalar(p + "one", 1.f)}, {}, p + "add2")}, {}, p + "out");
}

int callsOf(const Graph& g, const std::string& function) {
    int n = 0;
    for (NodeId id : g.nodeOrder())
        if (g.node(id).opType == function && g.node(id).domain == kFusedFunctionDomain) ++n;
    return n;
}

}  // namespace

TEST(FusionActivationGroups, ErfAndTanhGeluBecomeOneCallEachSharingFunctions) {
    GraphBuilder b("gelu", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto y = b.input("y", DataType::Float, {3, 1, 5});
    b.output(b.op("Relu", {erfGelu(b, x, "a_")}, {}, "relu"));
    b.output(erfGelu(b, y, "b_"));  // same form and constants, another shape: the same function
    b.output(tanhGelu(b, x, "t_", true));
    b.output(tanhGelu(b, y, "u_", false));  // x·x·x: another body
    // (0.5·x)·(1 + erf(x·(1/√2))): the other erf spelling, another body.
    auto erf2 = b.op("Erf", {b.op("Mul", {x, b.scalar("rsqrt2", 0.70710678f)}, {}, "c_mul")}, {}, "c_erf");
    b.output(b.op("Mul", {b.op("Mul", {x, b.scalar("c_half", 0.5f)}, {}, "c_halfx"), b.op("Add", {erf2, b.scalar("c_one", 1.f)}, {}, "c_add")},
                  {}, "c_out"));
    Model m = b.finish();
    const Model original = m;
    PassResult r = runAndCompare(m, "group-gelu");
    EXPECT_EQ(opCounts(m.graph),
              (std::map<std::string, int>{{"Gelu", 2}, {"Gelu_2", 1}, {"GeluTanh", 1}, {"GeluTanh_2", 1}, {"Relu", 1}}));
    EXPECT_EQ(callsOf(m.graph, "Gelu"), 2);
    ASSERT_EQ(m.functions.size(), 4u);
    EXPECT_EQ(m.functions[0].name, "Gelu");
    EXPECT_EQ(m.functions[0].body->inputs().size(), 1u);  // constants live inside the body
    EXPECT_EQ(m.functions[0].body->nodeCount(), 5u + 3u);  // 5 ops + 3 Constant nodes
    EXPECT_TRUE(m.graph.initializerOrder().empty());       // the scalars went with their nodes
    // Calls of shapes [2, 8] and [3, 1, 5] share the body: it carries no shape of either.
    for (ValueId v : m.functions[0].body->valueIds()) EXPECT_FALSE(m.functions[0].body->value(v).type.shape.has_value());
    EXPECT_EQ(m.opsetFor(kFusedFunctionDomain), 1);
    const std::string applied = remarkText(r, RemarkKind::Applied);
    EXPECT_NE(applied.find("GELU (erf form) at a_erf: 5 nodes (a_div, a_erf, a_add1, a_mulx, a_half_mul) become one call"), std::string::npos)
        << applied;
    EXPECT_NE(applied.find("GELU (tanh form) at t_tanh: 8 nodes"), std::string::npos) << applied;
    EXPECT_NE(applied.find("GELU (tanh form) at u_tanh: 9 nodes"), std::string::npos) << applied;
    // Provenance: the call stands for the nodes it replaced.
    for (NodeId id : m.graph.nodeOrder())
        if (m.graph.node(id).opType == "Gelu") {
            EXPECT_EQ(m.graph.node(id).provenance.size(), 5u);
        }
    // Export and import keep the calls and functions runnable.
    const std::string path = test::tempDir("activation_groups") + "/gelu.onnx";
    onnxio::exportModelFile(m, path);
    Model again = onnxio::importModelFile(path);
    EXPECT_EQ(again.functions.size(), 4u);
    auto inputs = eval::randomInputs(original, 5);
    auto reference = eval::run(original, inputs), got = eval::run(again, inputs);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
}

TEST(FusionActivationGroups, SiluAndQuickGeluBecomeCallsGatesStay) {
    GraphBuilder b("silu", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    b.output(b.op("Mul", {x, b.op("Sigmoid", {x}, {}, "sig")}, {}, "silu"));
    b.output(b.op("Mul", {b.op("Sigmoid", {b.op("Mul", {x, b.scalar("k", 1.702f)}, {}, "kx")}, {}, "sig2"), x}, {}, "quick"));
    b.output(b.op("Mul", {b.input("y", DataType::Float, {2, 8}), b.op("Sigmoid", {x}, {}, "sig3")}, {}, "gate"));
    Model m = b.finish();
    PassResult r = runAndCompare(m, "group-silu");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Silu", 1}, {"QuickGelu", 1}, {"Sigmoid", 1}, {"Mul", 1}}));
    ASSERT_EQ(m.functions.size(), 2u);
    EXPECT_EQ(m.functions[1].body->nodeCount(), 4u);  // Constant k, Mul, Sigmoid, Mul
    const std::string applied = remarkText(r, RemarkKind::Applied);
    EXPECT_NE(applied.find("SiLU x·Sigmoid(x) at silu: 2 nodes (sig, silu) become one call"), std::string::npos) << applied;
    EXPECT_NE(applied.find("QuickGELU x·Sigmoid(1.702·x) at quick: 3 nodes (kx, sig2, quick)"), std::string::npos) << applied;
    EXPECT_EQ(applied.find("gate"), std::string::npos);
}

TEST(FusionActivationGroups, IntermediateWithSecondReaderIsRefused) {
    GraphBuilder b("trap", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    b.output(erfGelu(b, x, "", true));
    auto sig = b.op("Sigmoid", {x}, {}, "sig");
    b.output(b.op("Mul", {x, sig}, {}, "silu"));
    b.output(b.op("Neg", {sig}, {}, "neg"));  // the sigmoid has a second reader
    Model m = b.finish();
    const auto before = opCounts(m.graph);
    PassResult g = runAndCompare(m, "group-gelu");
    PassResult s = runAndCompare(m, "group-silu");
    EXPECT_FALSE(g.changed);
    EXPECT_FALSE(s.changed);
    EXPECT_EQ(opCounts(m.graph), before);
    EXPECT_TRUE(m.functions.empty());
    EXPECT_NE(remarkText(g, RemarkKind::Missed).find("GELU (erf form) at erf not grouped into a function: 'erf_out' has 2 readers (tap, add1)"),
              std::string::npos) << remarkText(g, RemarkKind::Missed);
    EXPECT_NE(remarkText(s, RemarkKind::Missed).find("at silu not grouped into a function: 'sig_out' has 2 readers"), std::string::npos)
        << remarkText(s, RemarkKind::Missed);
}

TEST(FusionActivationGroups, OnlyLevelAllGroupsAndExtendedStillReports) {
    const auto& reg = PassRegistry::global();
    for (const char* pass : {"group-gelu", "group-silu"}) {
        auto extended = reg.pipeline(Level::Extended), all = reg.pipeline(Level::All);
        EXPECT_EQ(std::count(extended.begin(), extended.end(), pass), 0) << pass;
        ASSERT_EQ(std::count(all.begin(), all.end(), pass), 1) << pass;
        // After the pattern fusions, whose missed remarks stay at level extended.
        auto at = std::find(all.begin(), all.end(), pass), fuse = std::find(all.begin(), all.end(), "fuse-silu");
        EXPECT_LT(fuse, at);
    }
    const auto extended = reg.pipeline(Level::Extended);
    EXPECT_NE(std::find(extended.begin(), extended.end(), "fuse-gelu"), extended.end());
}

TEST(FusionActivationGroups, GroupIntoFunctionsAfterwardsKeepsCallsOpaque) {
    GraphBuilder b("mlp", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto h = b.op("Add", {b.op("MatMul", {x, b.constant("w1", randomFloats({8, 8}, 3, -0.5f, 0.5f))}, {}, "mm1"),
                          b.constant("b1", randomFloats({8}, 4))}, {}, "bias1");
    auto a = erfGelu(b, h, "");
    b.output(b.op("Add", {b.op("MatMul", {a, b.constant("w2", randomFloats({8, 4}, 5, -0.5f, 0.5f))}, {}, "mm2"),
                          b.constant("b2", randomFloats({4}, 6))}, {}, "bias2"));
    Model m = b.finish();
    const Model original = m;
    runAndCompare(m, "group-gelu");
    ASSERT_EQ(callsOf(m.graph, "Gelu"), 1);
    auto res = groupIntoFunctions(m);
    EXPECT_EQ(callsOf(m.graph, "Gelu"), 1);  // not swallowed into a group
    EXPECT_EQ(res.functions, 2u);            // MatMul+Add twice
    EXPECT_EQ(m.graph.nodeCount(), 3u);
    EXPECT_EQ(m.functions.size(), 3u);
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    auto inputs = eval::randomInputs(original, 9);
    auto reference = eval::run(original, inputs), got = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
}

TEST(FusionActivationGroups, TransformerBlockExampleGeluBecomesOneCall) {
    const examples::Example* ex = examples::find("transformer_block");
    ASSERT_NE(ex, nullptr);
    Model m = ex->build();
    const int erfBefore = opCounts(m.graph)["Erf"];
    ASSERT_EQ(erfBefore, 1);
    const size_t nodesBefore = m.graph.nodeCount();
    runAndCompare(m, "group-gelu");
    EXPECT_EQ(opCounts(m.graph)["Erf"], 0);
    EXPECT_EQ(callsOf(m.graph, "Gelu"), 1);
    EXPECT_EQ(m.graph.nodeCount(), nodesBefore - 4);  // 5 nodes → 1 call
}

TEST(FusionActivationGroups, RecSiluFormsBecomeCallsAtLevelAll) {
    const std::string path = test::realModel("ch_PP-OCRv4_rec_infer.onnx");
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "real models not fetched";
    onnxio::ImportOptions io;
    io.pinnedDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
    Model m = onnxio::importModelFile(path, io);
    const Model original = m;
    PassManager pm;
    pm.addLevel(Level::All);
    pm.run(m);
    int calls = 0;
    for (const Function& f : m.functions)
        if (f.name.rfind("Silu", 0) == 0) calls += callsOf(m.graph, f.name);
    EXPECT_EQ(calls, 7);
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    eval::RunOptions ro;
    ro.dims = io.pinnedDims;
    auto inputs = eval::randomInputs(original, 3, io.pinnedDims);
    auto reference = eval::run(original, inputs, ro), got = eval::run(m, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
}

TEST(FusionActivationGroups, SiluInsideAnIfBranchBecomesACallThere) {
    GraphBuilder b("branchy", 17);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto cond = b.input("cond", DataType::Bool, {});
    auto thenBody = std::make_shared<Graph>();
    thenBody->name = "then";
    ValueId outer = thenBody->addOuterScopeValue("x");
    ValueId sig = thenBody->addValue("sig_out", TypeInfo::tensor(DataType::Float));
    ValueId out = thenBody->addValue("silu_out", TypeInfo::tensor(DataType::Float));
    thenBody->addNode("Sigmoid", {outer}, {sig}, {}, "sig");
    thenBody->addNode("Mul", {outer, sig}, {out}, {}, "silu");
    thenBody->markOutput(out);
    auto elseBody = std::make_shared<Graph>();
    elseBody->name = "else";
    ValueId outer2 = elseBody->addOuterScopeValue("x");
    ValueId neg = elseBody->addValue("neg_out", TypeInfo::tensor(DataType::Float));
    elseBody->addNode("Neg", {outer2}, {neg}, {}, "neg");
    elseBody->markOutput(neg);
    b.output(b.op("If", {cond}, {Attribute::makeGraph("then_branch", thenBody), Attribute::makeGraph("else_branch", elseBody)}, "if"));
    (void)x;
    Model m = b.finish();
    const Model original = m;
    PassResult r = runAndCompare(m, "group-silu");
    // The then branch (the call) runs: compare with cond = true.
    std::vector<TensorPtr> inputs{eval::randomInputs(original, 4)[0], makeTensorOf<uint8_t>(DataType::Bool, {}, {1})};
    auto reference = eval::run(original, inputs), got = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-5, 1e-6)) EXPECT_TRUE(d.ok) << d.name << " " << d.maxAbs;
    const float x0 = inputs[0]->as<float>()[0];
    EXPECT_NEAR(got[0]->as<float>()[0], x0 / (1.f + std::exp(-x0)), 1e-5);  // the SiLU branch ran
    EXPECT_TRUE(r.changed);
    EXPECT_EQ(opCounts(*thenBody), (std::map<std::string, int>{{"Silu", 1}}));
    ASSERT_EQ(m.functions.size(), 1u);
    EXPECT_EQ(m.opsetFor(kFusedFunctionDomain), 1);
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("SiLU x·Sigmoid(x) at silu: 2 nodes (sig, silu) become one call"), std::string::npos);
}
