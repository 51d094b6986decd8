// passlens-cli optimize: exit codes, report format, --verify.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "examples/Examples.h"
#include "onnx/Export.h"

using namespace passlens;

TEST(PassesCli, UnknownPassExitsTwoListingValidNames) {
    auto r = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o",
                           test::tempDir("passes_cli") + "/o.onnx", "--passes", "dce,bogus"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown pass 'bogus'; valid passes: shape-chain-folding, constant-folding, algebraic, cse, dce"), std::string::npos) << r.err;
}

TEST(PassesCli, ReportAndVerify) {
    std::string dir = test::tempDir("passes_cli_report");
    auto r = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o", dir + "/o.onnx",
                           "--level", "basic", "--report", dir + "/r.json", "--verify", "--dim",
                           "p2o.DynamicDimension.0=1", "--dim", "p2o.DynamicDimension.1=48", "--dim",
                           "p2o.DynamicDimension.2=64"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("verify: outputs match"), std::string::npos);
    std::ifstream f(dir + "/r.json");
    auto j = nlohmann::json::parse(f);
    ASSERT_EQ(j["passes"].size(), 9u);  // the basic level: 5 cleanup passes + 4 limited fusions
    EXPECT_EQ(j["passes"][0]["name"], "shape-chain-folding");
    const auto& p = j["passes"][1];
    EXPECT_EQ(p["name"], "constant-folding");
    EXPECT_GT(p["nodes_before"].get<int>(), p["nodes_after"].get<int>());
    ASSERT_FALSE(p["changes"].empty());
    for (const char* k : {"kind", "rule", "graph", "nodes", "provenance", "reason"}) EXPECT_TRUE(p["changes"][0].contains(k)) << k;
    auto verifyReport = test::runCli({"info", dir + "/o.onnx"});
    EXPECT_EQ(verifyReport.exitCode, 0);
}

// A fused node's change names the original nodes it came from, so a report reader need not
// resolve provenance ids against the input model.
TEST(PassesCli, ReportNamesTheNodesAFusionCameFrom) {
    std::string dir = test::tempDir("passes_cli_came_from");
    const auto* ex = examples::find("conv_bn_relu");
    ASSERT_NE(ex, nullptr);
    ir::Model m = ex->build();
    std::vector<std::string> convAndBn;
    for (ir::NodeId n : m.graph.nodeOrder())
        if (m.graph.node(n).opType == "Conv" || m.graph.node(n).opType == "BatchNormalization")
            convAndBn.push_back(m.graph.node(n).displayName());
    ASSERT_EQ(convAndBn.size(), 2u);
    onnxio::exportModelFile(m, dir + "/in.onnx");
    auto r = test::runCli({"optimize", dir + "/in.onnx", "-o", dir + "/o.onnx", "--level", "none", "--passes",
                           "fuse-conv-bn", "--report", dir + "/r.json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    std::ifstream f(dir + "/r.json");
    auto j = nlohmann::json::parse(f);
    ASSERT_EQ(j["passes"].size(), 1u);
    bool found = false;
    for (const auto& c : j["passes"][0]["changes"]) {
        if (!c.contains("came_from")) continue;
        auto names = c["came_from"].get<std::vector<std::string>>();
        std::sort(names.begin(), names.end());
        auto expected = convAndBn;
        std::sort(expected.begin(), expected.end());
        if (names == expected) found = true;
    }
    EXPECT_TRUE(found) << j["passes"][0]["changes"].dump(1);
}
