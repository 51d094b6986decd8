// The levels on real and generated models. Basic (constant folding, redundant nodes, the limited
// fusions) ends at or below ONNX Runtime's basic level on PP-OCR; on PyTorch-style transformer
// exports the extended level leaves no shape chain that only computes a Reshape target, the models
// stay dynamic, and outputs match for several batch and sequence lengths.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "onnx/VersionConvert.h"
#include "passes/PassManager.h"
#include "passes/ShapeChain.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

Model optimize(const Model& original, Level level, int64_t targetOpset = 0) {
    Model m = targetOpset ? onnxio::upgradeOpset(original, targetOpset) : original;
    PassManager pm;
    pm.addLevel(level);
    PipelineOptions o;
    o.keepSnapshots = false;
    pm.run(m, o);
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    return m;
}

void expectSameOutputs(const Model& original, const Model& optimized, const Dims& dims, double rtol, double atol) {
    eval::RunOptions ro;
    ro.dims = dims;
    auto inputs = eval::randomInputs(original, 5, dims);
    auto expected = eval::run(original, inputs, ro);
    auto actual = eval::run(optimized, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, actual, expected, rtol, atol))
        EXPECT_TRUE(d.ok) << "output " << d.name << " max abs " << d.maxAbs << " with " << dims[0].second << "x" << dims[1].second;
}

/// Nodes of a shape chain (Shape, Gather, Unsqueeze, Concat, ...) whose result is only ever read
/// as a Reshape target: what fuse-reshape exists to remove.
std::vector<std::string> chainsOnlyFeedingReshapes(const Graph& g) {
    std::vector<std::string> out;
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (n.opType != "Reshape" || n.inputs.size() < 2) continue;
        const Value& target = g.value(n.inputs[1]);
        if (target.initializer || target.producer == kNone) continue;
        if (traceShapeVector(g, n.inputs[1]).ok()) out.push_back(n.displayName());
    }
    return out;
}

std::string genModel(const std::string& name) { return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + name + ".onnx"; }

}  // namespace

TEST(PassesLevels, BasicIsAtOrBelowOnnxRuntimeBasicOnPaddleOcr) {
    // Node counts of ONNX Runtime 1.30's basic level (graphOptimizationLevel 'basic',
    // optimizedModelFilePath), measured with onnxruntime-node on these exact files.
    const std::map<std::string, size_t> onnxRuntimeBasic = {
        {"ch_PP-OCRv4_det_infer.onnx", 328}, {"ch_PP-OCRv4_rec_infer.onnx", 407}, {"ch_ppocr_mobile_v2.0_cls_infer.onnx", 179}};
    const std::map<std::string, Dims> pins = {
        {"ch_PP-OCRv4_det_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}}},
        {"ch_PP-OCRv4_rec_infer.onnx", {{"p2o.DynamicDimension.0", 2}, {"p2o.DynamicDimension.1", 160}}},
        {"ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"p2o.DynamicDimension.0", 2}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}}}};
    for (const auto& [file, ortNodes] : onnxRuntimeBasic) {
        const Model original = onnxio::importModelFile(test::realModel(file));
        const Model m = optimize(original, Level::Basic);
        EXPECT_LE(countNodesDeep(m.graph), ortNodes) << file;
        expectSameOutputs(original, m, pins.at(file), 1e-4, 1e-5);
        std::printf("[ nodes ] %s basic: %zu (ONNX Runtime basic %zu)\n", file.c_str(), countNodesDeep(m.graph), ortNodes);
    }
}

class PassesTransformerExport : public ::testing::TestWithParam<std::string> {};

TEST_P(PassesTransformerExport, ExtendedLeavesNoReshapeChainAndStaysDynamic) {
    const Model original = onnxio::importModelFile(genModel(GetParam()));
    ASSERT_FALSE(chainsOnlyFeedingReshapes(original.graph).empty());  // the export has them
    const Model m = optimize(original, Level::Extended, 17);
    EXPECT_EQ(chainsOnlyFeedingReshapes(m.graph), std::vector<std::string>{});
    // Still dynamic: the inputs keep their symbolic batch and sequence dims.
    for (ValueId v : eval::runtimeInputs(m.graph)) EXPECT_FALSE(m.graph.value(v).type.shape->isStatic());
    // The decomposed LayerNorm → LayerNormalization fold sums in another order: 1e-3.
    for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 1}, {2, 7}, {3, 16}})
        expectSameOutputs(original, m, {{"batch", batch}, {"seq", seq}}, 1e-3, 1e-3);
    // Idempotent as a whole: a second run of the level changes nothing (equal targets share one
    // initializer, so not even CSE finds work).
    Model again = m;
    PassManager pm;
    pm.addLevel(Level::Extended);
    for (const auto& step : pm.run(again).steps) EXPECT_FALSE(step.result.changed) << step.result.name;
    std::printf("[ nodes ] %s: %zu -> extended %zu\n", GetParam().c_str(), original.graph.nodeCount(), m.graph.nodeCount());
}

TEST_P(PassesTransformerExport, BasicChangesNothingNumerically) {
    const Model original = onnxio::importModelFile(genModel(GetParam()));
    const Model m = optimize(original, Level::Basic);
    EXPECT_EQ(chainsOnlyFeedingReshapes(m.graph), std::vector<std::string>{});
    expectSameOutputs(original, m, {{"batch", 2}, {"seq", 5}}, 1e-5, 1e-6);
}

TEST_P(PassesTransformerExport, AllGroupsEveryAttention) {
    const Model original = onnxio::importModelFile(genModel(GetParam()));
    const Model m = optimize(original, Level::All, 17);
    size_t softmax = 0, calls = 0;
    for (NodeId id : original.graph.nodeOrder()) softmax += original.graph.node(id).opType == "Softmax";
    for (NodeId id : m.graph.nodeOrder()) calls += m.graph.node(id).opType.rfind("Attention", 0) == 0;
    EXPECT_EQ(calls, softmax);
    expectSameOutputs(original, m, {{"batch", 2}, {"seq", 9}}, 1e-3, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Generated, PassesTransformerExport, ::testing::Values("bert_l2_scoped", "gpt_l2_scoped", "vit_l2_scoped"));
