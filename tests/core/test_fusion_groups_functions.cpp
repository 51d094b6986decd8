// optimize --group-functions: fusion groups become calls of model-local functions; the model stays
// checker-clean and numerically equal, and its top-level node count is the kernel count.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/FusionGroups.h"
#include "eval/Interpreter.h"
#include "examples/Examples.h"
#include "ir/Error.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/fusion/GroupFunctions.h"
#include "TestSupport.h"

using namespace passlens;
using Dims = std::vector<std::pair<std::string, int64_t>>;

namespace {

void expectSameOutputs(const ir::Model& original, const ir::Model& changed, const std::vector<ir::TensorPtr>& inputs,
                       const eval::RunOptions& ro = {}) {
    auto reference = eval::run(original, inputs, ro);
    auto got = eval::run(changed, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5))
        EXPECT_TRUE(d.ok) << "output " << d.name << " max abs " << d.maxAbs;
}

}  // namespace

TEST(FusionGroupFunctions, ChainBecomesOneCallThatRunsAndChecks) {
    ir::GraphBuilder b("chain", 13);
    auto x = b.input("x", ir::DataType::Float, {1, 3, 8, 8});
    auto c = b.op("Conv", {x, b.constant("w", ir::randomFloats({4, 3, 3, 3}, 9, -0.5f, 0.5f))},
                  {ir::Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv");
    auto r = b.op("Relu", {b.op("Add", {c, b.constant("bias", ir::randomFloats({4, 1, 1}, 10))}, {}, "add")}, {}, "relu");
    b.output(b.op("Softmax", {r}, {ir::Attribute::makeInt("axis", 1)}, "softmax"));
    b.output(r);  // a group output that is also a graph output
    auto m = b.finish();
    ir::Model original = m;
    auto res = passes::groupIntoFunctions(m);
    EXPECT_EQ(res.functions, 1u);
    EXPECT_EQ(res.fusedNodes, 3u);
    EXPECT_EQ(res.nodesBefore, 4u);
    EXPECT_EQ(res.nodesAfter, 2u);
    EXPECT_EQ(res.kernels(), 2u);
    ASSERT_EQ(m.functions.size(), 1u);
    EXPECT_EQ(m.functions[0].domain, passes::kFusedFunctionDomain);
    EXPECT_EQ(m.functions[0].body->nodeCount(), 3u);
    EXPECT_EQ(m.functions[0].body->inputs().size(), 3u);  // x, w, bias
    EXPECT_EQ(m.opsetFor(passes::kFusedFunctionDomain), 1);
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    auto inputs = eval::randomInputs(original, 3);
    expectSameOutputs(original, m, inputs);
    // Export and import keep the functions runnable.
    std::string path = test::tempDir("group_functions") + "/chain.onnx";
    onnxio::exportModelFile(m, path);
    auto again = onnxio::importModelFile(path);
    EXPECT_EQ(again.graph.nodeCount(), 2u);
    expectSameOutputs(original, again, inputs);
    // A second grouping changes nothing: the call is Opaque, Softmax stays alone.
    auto second = passes::groupIntoFunctions(again);
    EXPECT_EQ(second.functions, 0u);
    EXPECT_EQ(again.graph.nodeCount(), 2u);
    EXPECT_EQ(again.functions.size(), 1u);
}

TEST(FusionGroupFunctions, ModelWithoutMultiMemberGroupsIsUnchanged) {
    ir::GraphBuilder b("lonely");
    auto x = b.input("x", ir::DataType::Float, {2, 3});
    b.output(b.op("Softmax", {b.op("Softmax", {x}, {}, "s1")}, {}, "s2"));
    auto m = b.finish();
    auto res = passes::groupIntoFunctions(m);
    EXPECT_EQ(res.functions, 0u);
    EXPECT_EQ(m.graph.nodeCount(), 2u);
    EXPECT_TRUE(m.functions.empty());
    EXPECT_EQ(m.opsetFor(passes::kFusedFunctionDomain), 0);
}

TEST(FusionGroupFunctions, ExamplesStayEquivalent) {
    for (const auto& ex : examples::all()) {
        SCOPED_TRACE(ex.id);
        auto m = ex.build();
        ir::Model original = m;
        auto inputs = eval::randomInputs(original, 5);
        auto res = passes::groupIntoFunctions(m);
        EXPECT_EQ(res.deepNodesAfter, res.deepNodesBefore - res.fusedNodes + res.functions);
        auto problem = onnxio::checkModel(m);
        EXPECT_FALSE(problem.has_value()) << *problem;
        expectSameOutputs(original, m, inputs);
    }
}

TEST(FusionGroupFunctions, IfBodiesAreGroupedWithCapturesAsArguments) {
    ir::GraphBuilder b("if_chain");
    auto cond = b.input("cond", ir::DataType::Bool, {});
    (void)b.input("x", ir::DataType::Float, {2});
    auto makeBranch = [&](const std::string& op) {
        auto g = std::make_shared<ir::Graph>();
        g->name = op;
        auto outer = g->addOuterScopeValue("x");  // read from the enclosing graph
        auto t = g->addValue(op + "_t", ir::TypeInfo::tensor(ir::DataType::Float));
        auto out = g->addValue(op + "_out", ir::TypeInfo::tensor(ir::DataType::Float));
        g->addNode(op, {outer, outer}, {t}, {}, op + "_op");
        g->addNode("Relu", {t}, {out}, {}, op + "_relu");
        g->markOutput(out);
        return g;
    };
    b.output(b.op("If", {cond}, {ir::Attribute::makeGraph("then_branch", makeBranch("Sub")),
                                 ir::Attribute::makeGraph("else_branch", makeBranch("Mul"))}, "if"));
    ir::Model m = b.finish();
    ASSERT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    ir::Model original = m;
    auto res = passes::groupIntoFunctions(m);
    EXPECT_EQ(res.functions, 2u);
    EXPECT_EQ(res.subgraphFunctions, 2u);
    EXPECT_EQ(res.nodesAfter, 1u);
    EXPECT_EQ(res.deepNodesBefore, 5u);
    EXPECT_EQ(res.deepNodesAfter, 3u);
    for (const auto& f : m.functions) EXPECT_EQ(f.body->inputs().size(), 1u) << f.name;  // the capture, passed in
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    auto x = ir::floatTensor({2}, {-3, 4});
    for (uint8_t c : {0, 1}) expectSameOutputs(original, m, {ir::makeTensorOf<uint8_t>(ir::DataType::Bool, {}, {c}), x});
    // Top level only leaves the bodies alone.
    ir::Model top = original;
    EXPECT_EQ(passes::groupIntoFunctions(top, {}, false).functions, 0u);
}

class GroupFunctionsRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GroupFunctionsRealModel, LevelAllThenGroupFunctionsIsCheckerCleanAndEquivalent) {
    const std::string file = GetParam();
    ir::Model m = onnxio::importModelFile(test::realModel(file));
    const bool silero = file.find("silero") != std::string::npos, legacy = file.find("legacy") != std::string::npos;
    Dims pins;
    if (silero) {
        if (legacy) pins = {{"batch", 1}, {"sequence", 512}};
    } else {
        const auto& d = m.graph.value(eval::runtimeInputs(m.graph).at(0)).type.shape->dims;
        int64_t values[] = {1, 3, file.find("det") != std::string::npos ? 64 : 48, 64};
        for (size_t i = 0; i < d.size() && i < 4; ++i)
            if (!d[i].isStatic() && !d[i].param.empty()) pins.push_back({d[i].param, values[i]});
    }
    if (!pins.empty()) onnxio::pinDims(m, pins);
    eval::RunOptions ro;
    ro.dims = pins;
    std::vector<ir::TensorPtr> inputs;
    if (silero) {
        std::vector<float> a(legacy ? 512 : 576);
        for (size_t i = 0; i < a.size(); ++i) a[i] = 0.3f * std::sin(0.05f * float(i));
        auto audio = ir::makeTensorOf<float>(ir::DataType::Float, {1, (int64_t)a.size()}, a);
        auto sr = ir::makeTensorOf<int64_t>(ir::DataType::Int64, {}, {16000});
        if (legacy) {
            auto state = ir::makeTensorOf<float>(ir::DataType::Float, {2, 1, 64}, std::vector<float>(128, 0.f));
            inputs = {audio, sr, state, state};
        } else {
            inputs = {audio, ir::makeTensorOf<float>(ir::DataType::Float, {2, 1, 128}, std::vector<float>(256, 0.f)), sr};
        }
    } else {
        inputs = eval::randomInputs(m, 7, pins);
    }
    ir::Model original = m;
    passes::PassManager pm;
    pm.addLevel(passes::Level::All);
    passes::PipelineOptions o;
    o.keepSnapshots = false;
    pm.run(m, o);
    const size_t optimized = m.graph.nodeCount();
    auto res = passes::groupIntoFunctions(m);
    EXPECT_EQ(res.nodesBefore, optimized);
    EXPECT_EQ(res.deepNodesAfter, res.deepNodesBefore - res.fusedNodes + res.functions);
    if (res.subgraphFunctions == 0) {
        EXPECT_EQ(res.nodesAfter, optimized - res.fusedNodes + res.functions);
    }
    if (optimized > 10) {
        EXPECT_GT(res.functions, 0u);
    }
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    expectSameOutputs(original, m, inputs, ro);
    if (silero) {  // the If bodies for the other sample rate run too
        auto at8k = inputs;
        at8k[legacy ? 1 : 2] = ir::makeTensorOf<int64_t>(ir::DataType::Int64, {}, {8000});
        if (!legacy) at8k[0] = ir::makeTensorOf<float>(ir::DataType::Float, {1, 288}, std::vector<float>(288, 0.1f));
        expectSameOutputs(original, m, at8k, ro);
    }
    std::printf("[ kernels ] %s: %zu nodes -> %zu after --level all -> %zu top-level (%zu kernels, %zu functions); "
                "with subgraphs %zu -> %zu (%zu functions in bodies)\n",
                file.c_str(), original.graph.nodeCount(), optimized, res.nodesAfter, res.kernels(), res.functions,
                res.deepNodesBefore, res.deepNodesAfter, res.subgraphFunctions);
}

INSTANTIATE_TEST_SUITE_P(Five, GroupFunctionsRealModel, ::testing::ValuesIn(test::realModelNames()), [](const auto& info) {
    std::string n = info.param;
    for (char& c : n)
        if (!isalnum((unsigned char)c)) c = '_';
    return n;
});

TEST(FusionGroupFunctions, CliOptimizeGroupFunctionsVerifiesAndReportsKernels) {
    const std::string out = test::tempDir("group_functions") + "/cls_grouped.onnx";
    const std::string reportPath = out + ".report.json";
    auto r = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", out, "--level", "all",
                           "--group-functions", "--verify", "--report", reportPath, "--dim", "p2o.DynamicDimension.0=1",
                           "--dim", "p2o.DynamicDimension.1=48", "--dim", "p2o.DynamicDimension.2=64"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("kernels"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("verify: outputs match"), std::string::npos) << r.out;
    auto m = onnxio::importModelFile(out);
    EXPECT_FALSE(m.functions.empty());
    EXPECT_FALSE(onnxio::checkModel(m).has_value());
    size_t calls = 0;
    for (auto n : m.graph.nodeOrder()) calls += m.graph.node(n).domain == passes::kFusedFunctionDomain;
    EXPECT_EQ(calls, m.functions.size());
    // The report carries the grouping: the kernel count equals the exported model's top-level nodes.
    std::ifstream f(reportPath);
    auto j = nlohmann::json::parse(f);
    ASSERT_TRUE(j.contains("group_functions"));
    EXPECT_EQ(j["group_functions"]["functions"].get<size_t>(), m.functions.size());
    EXPECT_EQ(j["group_functions"]["nodes_after"].get<size_t>(), m.graph.nodeCount());
}
