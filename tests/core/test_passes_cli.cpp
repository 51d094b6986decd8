// passlens-cli optimize: exit codes, report format, --verify.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "TestSupport.h"

using namespace passlens;

TEST(PassesCli, UnknownPassExitsTwoListingValidNames) {
    auto r = test::runCli({"optimize", test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "-o",
                           test::tempDir("passes_cli") + "/o.onnx", "--passes", "dce,bogus"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown pass 'bogus'; valid passes: constant-folding, algebraic, cse, dce"), std::string::npos) << r.err;
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
    ASSERT_EQ(j["passes"].size(), 4u);
    const auto& p = j["passes"][0];
    EXPECT_EQ(p["name"], "constant-folding");
    EXPECT_GT(p["nodes_before"].get<int>(), p["nodes_after"].get<int>());
    ASSERT_FALSE(p["changes"].empty());
    for (const char* k : {"kind", "rule", "graph", "nodes", "provenance", "reason"}) EXPECT_TRUE(p["changes"][0].contains(k)) << k;
    auto verifyReport = test::runCli({"info", dir + "/o.onnx"});
    EXPECT_EQ(verifyReport.exitCode, 0);
}
