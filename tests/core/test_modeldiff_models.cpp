// The model diff on the five real models: a renamed, reordered copy is `same` node for node and
// maps to the true counterparts; the same copy with one weight changed and one Relu removed shows
// exactly those two; ONNX Runtime's optimized output reads as what it fused and removed; the CLI's
// exit codes and JSON.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "core/ModelScramble.h"
#include "core/TestSupport.h"
#include "diff/DiffReport.h"
#include "diff/ModelDiff.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::diff;

namespace {

Model reimport(const Model& m) { return onnxio::importModelBytes(onnxio::exportModelBytes(m), "."); }

std::vector<Graph*> allGraphs(Model& m) {
    std::vector<Graph*> out;
    m.graph.forEachGraph([&](Graph& g) { out.push_back(&g); });
    return out;
}

std::string howCounts(const ModelComparison& d) {
    std::map<std::string, size_t> n;
    for (const auto& g : d.graphs)
        for (const auto& r : g.nodes)
            if (r.matched()) ++n[std::string(howName(r.how))];
    std::string s;
    for (const auto& [k, v] : n) s += k + " " + std::to_string(v) + "  ";
    return s;
}

class RealModelDiff : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        path_ = test::realModel(GetParam());
        if (!std::filesystem::exists(path_)) GTEST_SKIP() << "real models not fetched";
        a_ = onnxio::importModelFile(path_);
    }
    std::string path_;
    Model a_;
};

}  // namespace

/// A renamed, reordered, re-imported copy of `a`: every node `same`, >= 95% mapped to the true node.
static void expectRenamedCopyMatches(const Model& a, const std::string& label) {
    test::ScrambledModel s = test::scrambleModel(a, 11);
    const Model b = reimport(s.model);
    const ModelComparison d = compareModels(a, b);
    size_t total = 0;
    a.graph.forEachGraph([&](const Graph& g) { total += g.nodeCount(); });
    EXPECT_EQ(d.summary.same, total) << diffToText(d);
    EXPECT_EQ(d.summary.differing(), 0u);

    size_t truthful = 0;
    const GraphComparison& main = d.graphs.front();
    for (NodeId n : a.graph.nodeOrder()) {
        const NodeDiff* row = main.rowForA(n);
        ASSERT_NE(row, nullptr);
        truthful += row->b != kNone && b.graph.node(row->b).name == s.newNameOf.at(n);
    }
    const double share = static_cast<double>(truthful) / static_cast<double>(a.graph.nodeCount());
    EXPECT_GE(share, 0.95) << truthful << " of " << a.graph.nodeCount();
    std::printf("[ diff ] %s: %zu nodes, %.1f%% mapped to the true node; %s\n", label.c_str(), total, share * 100,
                howCounts(d).c_str());
}

TEST_P(RealModelDiff, RenamedReorderedCopyIsSameAndMapsToTheTrueNodes) { expectRenamedCopyMatches(a_, GetParam()); }

TEST(ModelDiffGenerated, RenamedReorderedBertIsSameAndMapsToTheTrueNodes) {
    // PyTorch-export style: many interchangeable Shape→Gather→Unsqueeze chains per layer.
    const std::string path = std::string(PASSLENS_GEN_MODELS_DIR) + "/bert_l24_scoped.onnx";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "generated models not written (gen_models fixture)";
    expectRenamedCopyMatches(onnxio::importModelFile(path), "bert_l24_scoped");
}

TEST_P(RealModelDiff, OneWeightChangedAndOneReluRemovedAreExactlyTheDifferences) {
    Model mutated = a_;
    const auto mut = test::removeOneReluAndChangeOneWeight(mutated);
    if (!mut) GTEST_SKIP() << "no Relu in " << GetParam();
    const std::vector<Graph*> graphsA = allGraphs(a_);
    const Model b = reimport(test::scrambleModel(mutated, 12).model);
    const ModelComparison d = compareModels(a_, b);
    EXPECT_EQ(d.summary.changed, 1u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInA, 1u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInB, 0u) << diffToText(d);
    for (const GraphComparison& g : d.graphs) {
        if (g.a == graphsA[mut->graphIndex]) {
            EXPECT_EQ(g.rowForA(mut->removedRelu)->status, NodeStatus::OnlyInA);
        }
        if (g.a != graphsA[mut->changedGraphIndex]) continue;
        const NodeDiff* row = g.rowForA(mut->changedNode);
        ASSERT_NE(row, nullptr);
        EXPECT_EQ(row->status, NodeStatus::Changed);
        ASSERT_EQ(row->changes.size(), 1u);
        EXPECT_NE(row->changes[0].find("max |Δ| 0.25"), std::string::npos) << row->changes[0];
    }
}

INSTANTIATE_TEST_SUITE_P(Five, RealModelDiff, ::testing::ValuesIn(test::realModelNames()),
                         [](const auto& info) {
                             std::string s = info.param.substr(0, info.param.find('.'));
                             for (char& c : s)
                                 if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                             return s;
                         });

TEST(ModelDiffOrt, OnnxRuntimeOptimizedClsReadsAsWhatWasFusedAndRemoved) {
    const std::string original = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    if (!std::filesystem::exists(original)) GTEST_SKIP() << "real models not fetched";
    const std::string dir = test::tempDir("ort");
    const std::string optimized = dir + "/cls_extended.onnx";
    const std::string cmd = std::string(PASSLENS_ORT_SCRIPT) + " " + std::string(PASSLENS_TEST_TMP) + "/ort_node " +
                            std::filesystem::absolute(original).string() + " extended " + optimized;
    const int rc = std::system(cmd.c_str());
    if (rc != 0 && WEXITSTATUS(rc) == 3) GTEST_SKIP() << "onnxruntime-node cannot be installed here";
    ASSERT_EQ(rc, 0) << cmd;

    const test::CliResult r = test::runCli({"diff", original, optimized});
    EXPECT_EQ(r.exitCode, 1) << r.err;
    std::printf("%s\n", r.out.c_str());
    const Model a = onnxio::importModelFile(original);
    size_t batchNorms = 0;
    for (NodeId n : a.graph.nodeOrder()) batchNorms += a.graph.node(n).opType == "BatchNormalization";
    ASSERT_GT(batchNorms, 0u);
    // Every BatchNormalization is folded into its Conv: gone from B, and the Conv's weights changed.
    EXPECT_NE(r.out.find("removed " ), std::string::npos);
    EXPECT_NE(r.out.find(std::to_string(batchNorms) + " BatchNormalization"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("values differ: max |Δ|"), std::string::npos);
    // Conv+Relu fused into ORT's FusedConv (matched by the kept node name), constants saved as initializers.
    EXPECT_NE(r.out.find("replaced Conv → com.microsoft.FusedConv ×"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Constant nodes became initializers"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("auto_pad"), std::string::npos) << "schema defaults written by ORT are not changes";
}

TEST(ModelDiffCli, ExitCodesAndJson) {
    const std::string model = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    if (!std::filesystem::exists(model)) GTEST_SKIP() << "real models not fetched";
    const test::CliResult same = test::runCli({"diff", model, model});
    EXPECT_EQ(same.exitCode, 0) << same.err;
    EXPECT_NE(same.out.find("changed 0, only in A 0, only in B 0"), std::string::npos) << same.out;

    const Model a = onnxio::importModelFile(model);
    Model b = a;
    const NodeId last = b.graph.nodeOrder().back();
    b.graph.node(last).setAttr(Attribute::makeInt("axis", 0));
    const std::string changed = test::tempDir("cli") + "/changed.onnx";
    onnxio::exportModelFile(b, changed);
    const test::CliResult json = test::runCli({"diff", model, changed, "--json"});
    EXPECT_EQ(json.exitCode, 1) << json.err;
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["summary"]["changed"], 1);
    EXPECT_EQ(j["summary"]["same"], a.graph.nodeCount() - 1);

    const test::CliResult missing = test::runCli({"diff", model, "/nonexistent.onnx"});
    EXPECT_EQ(missing.exitCode, 2);
    EXPECT_NE(missing.err.find("nonexistent.onnx"), std::string::npos) << missing.err;
    const test::CliResult usage = test::runCli({"diff", model});
    EXPECT_EQ(usage.exitCode, 2);
    const test::CliResult badFlag = test::runCli({"diff", model, model, "--bogus"});
    EXPECT_EQ(badFlag.exitCode, 2);
}
