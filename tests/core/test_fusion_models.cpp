// The extended level (all pattern fusions) on the five real models, as they are and upgraded to
// opset 17: checker-clean, outputs within rtol 1e-4, only standard ONNX ops; and on PP-OCRv4 rec
// every decomposed LayerNorm and HardSwish fused and every BatchNorm folded.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "onnx/VersionConvert.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

Dims pinsFor(const std::string& file) {
    if (file.find("rec") != std::string::npos) return {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
    if (file.find("cls") != std::string::npos)
        return {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}};
    if (file.find("det") != std::string::npos)
        return {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 96}, {"p2o.DynamicDimension.2", 96}};
    if (file.find("legacy") != std::string::npos) return {{"batch", 1}, {"sequence", 512}};
    return {};
}

std::vector<TensorPtr> inputsFor(const std::string& file, const Model& m) {
    if (file.find("silero") == std::string::npos) return eval::randomInputs(m, 7, pinsFor(file));
    const bool legacy = file.find("legacy") != std::string::npos;
    std::vector<float> a(legacy ? 512 : 576);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.3f * std::sin(0.05f * float(i)) + 0.01f * std::cos(1.3f * float(i));
    auto audio = makeTensorOf<float>(DataType::Float, {1, (int64_t)a.size()}, a);
    auto sr = makeTensorOf<int64_t>(DataType::Int64, {}, {16000});
    if (legacy) {
        auto state = makeTensorOf<float>(DataType::Float, {2, 1, 64}, std::vector<float>(128, 0.f));
        return {audio, sr, state, state};
    }
    return {audio, makeTensorOf<float>(DataType::Float, {2, 1, 128}, std::vector<float>(256, 0.f)), sr};
}

std::map<std::string, int> opCountsDeep(const Model& m) {
    std::map<std::string, int> c;
    m.graph.forEachGraph([&](const Graph& g) {
        for (NodeId n : g.nodeOrder()) ++c[g.node(n).opType];
    });
    return c;
}

/// Nodes outside the standard domains (ai.onnx, ai.onnx.ml), named.
std::string nonStandardOps(const Model& m) {
    std::string s;
    m.graph.forEachGraph([&](const Graph& g) {
        for (NodeId n : g.nodeOrder()) {
            const std::string d = canonicalDomain(g.node(n).domain);
            if (!d.empty() && d != "ai.onnx.ml") s += g.node(n).displayName() + " (" + d + ") ";
        }
    });
    return s;
}

/// Optimizes at the extended level (after an opset upgrade when `targetOpset`), checking the
/// result against the original; returns the optimized model.
Model optimizeExtended(const std::string& file, int64_t targetOpset, PipelineResult* result = nullptr) {
    onnxio::ImportOptions io;
    io.pinnedDims = pinsFor(file);
    Model original = onnxio::importModelFile(test::realModel(file), io);
    eval::RunOptions ro;
    ro.dims = pinsFor(file);
    auto inputs = inputsFor(file, original);
    auto reference = eval::run(original, inputs, ro);
    Model m = targetOpset ? onnxio::upgradeOpset(original, targetOpset) : original;
    PassManager pm;
    pm.addLevel(Level::Extended);
    PipelineOptions o;
    o.keepSnapshots = false;
    auto r = pm.run(m, o);
    if (result) *result = r;
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << file << ": " << *problem;
    EXPECT_EQ(nonStandardOps(m), "");
    auto got = eval::run(m, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5))
        EXPECT_TRUE(d.ok) << file << " output " << d.name << " max abs " << d.maxAbs;
    std::printf("[ nodes ] %s extended%s: %zu -> %zu (top level %zu -> %zu)\n", file.c_str(),
                targetOpset ? " + opset 17" : "", countNodesDeep(original.graph), countNodesDeep(m.graph),
                original.graph.nodeCount(), m.graph.nodeCount());
    return m;
}

}  // namespace

class FusionRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(FusionRealModel, ExtendedLevelMatchesWithStandardOps) { optimizeExtended(GetParam(), 0); }

TEST_P(FusionRealModel, ExtendedLevelAtOpset17Matches) {
    Model m = optimizeExtended(GetParam(), 17);
    EXPECT_EQ(m.opsetFor(""), 17);
    // Idempotent: a second run of the fusion passes finds nothing left to rewrite.
    PassManager again;
    for (const auto& info : PassRegistry::global().passes())
        if (info.role == PassRole::Fusion && info.level != Level::None && info.level <= Level::Extended)
            again.addPass(info.name);  // the fusions of the extended pipeline (not by-name passes)
    for (const auto& step : again.run(m).steps) EXPECT_FALSE(step.result.changed) << GetParam() << " " << step.result.name;
}

INSTANTIATE_TEST_SUITE_P(Five, FusionRealModel, ::testing::ValuesIn(test::realModelNames()),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& c : n) if (!isalnum((unsigned char)c)) c = '_';
                             return n;
                         });

TEST(FusionRealModels, PaddleOcrRecAtOpset17FusesEveryLayerNormAndHardSwish) {
    const std::string file = "ch_PP-OCRv4_rec_infer.onnx";
    auto before = opCountsDeep(onnxio::importModelFile(test::realModel(file)));
    // 5 decomposed LayerNorms (two ReduceMeans each), 28 clip-form HardSwish, 6 BatchNorms.
    ASSERT_EQ(before["ReduceMean"], 10);
    ASSERT_EQ(before["Clip"], 28);
    ASSERT_EQ(before["BatchNormalization"], 6);
    Model m = optimizeExtended(file, 17);
    auto after = opCountsDeep(m);
    EXPECT_EQ(after["LayerNormalization"], 5);
    EXPECT_EQ(after["HardSwish"], 28);
    EXPECT_EQ(after["ReduceMean"], 0);
    EXPECT_EQ(after["Pow"], 0);
    EXPECT_EQ(after["Sqrt"], 0);
    EXPECT_EQ(after["Clip"], 0);
    EXPECT_EQ(after["BatchNormalization"], 0);
}

TEST(FusionRealModels, PaddleOcrRecAtOpset9NamesTheOpsetItNeeds) {
    PipelineResult r;
    Model m = optimizeExtended("ch_PP-OCRv4_rec_infer.onnx", 0, &r);
    EXPECT_EQ(opCountsDeep(m)["LayerNormalization"], 0);
    EXPECT_EQ(opCountsDeep(m)["BatchNormalization"], 0);
    int layerNormMissed = 0, hardSwishMissed = 0;
    for (const auto& s : r.steps)
        for (const auto& rem : s.result.remarks) {
            if (rem.kind != RemarkKind::Missed) continue;
            layerNormMissed += rem.message.find("LayerNormalization needs opset 17, the model has opset 9") != std::string::npos;
            hardSwishMissed += rem.message.find("HardSwish needs opset 14, the model has opset 9") != std::string::npos;
        }
    EXPECT_EQ(layerNormMissed, 5);
    EXPECT_EQ(hardSwishMissed, 28);
}
