// `passlens-cli info` node counts must agree with counts taken straight from the protobuf.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <onnx/onnx_pb.h>

#include <fstream>
#include <map>

#include "TestSupport.h"

using namespace passlens;

namespace {

void countProto(const onnx::GraphProto& g, std::map<std::string, size_t>& ops, size_t& total, size_t& subgraphs) {
    for (const auto& n : g.node()) {
        ++total;
        ++ops[n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + ":" + n.op_type()];
        for (const auto& a : n.attribute()) {
            if (a.has_g()) { ++subgraphs; countProto(a.g(), ops, total, subgraphs); }
            for (const auto& sg : a.graphs()) { ++subgraphs; countProto(sg, ops, total, subgraphs); }
        }
    }
}

}  // namespace

TEST(Info, RealModelCountsMatchProtobuf) {
    for (const auto& name : test::realModelNames()) {
        std::string path = test::realModel(name);
        onnx::ModelProto mp;
        std::ifstream in(path, std::ios::binary);
        ASSERT_TRUE(mp.ParseFromIstream(&in)) << name;
        std::map<std::string, size_t> ops;
        size_t total = 0, subgraphs = 0;
        countProto(mp.graph(), ops, total, subgraphs);

        auto r = test::runCli({"info", path, "--json"});
        ASSERT_EQ(r.exitCode, 0) << name << ": " << r.err;
        auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["node_count"].get<size_t>(), static_cast<size_t>(mp.graph().node_size())) << name;
        EXPECT_EQ(j["node_count_with_subgraphs"].get<size_t>(), total) << name;
        EXPECT_EQ(j["subgraph_count"].get<size_t>(), subgraphs) << name;
        std::map<std::string, size_t> reported = j["op_counts"].get<std::map<std::string, size_t>>();
        EXPECT_EQ(reported, ops) << name;
        size_t realInputs = 0;  // graph inputs that are not initializers (older IR versions list both)
        for (const auto& i : mp.graph().input()) {
            bool isInit = false;
            for (const auto& t : mp.graph().initializer()) isInit = isInit || t.name() == i.name();
            if (!isInit) ++realInputs;
        }
        EXPECT_EQ(j["inputs"].size(), realInputs) << name;
    }
}

TEST(Info, TextNamesProducerOpsetsAndShapes) {
    auto r = test::runCli({"info", test::realModel("silero_vad_v5.onnx")});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("ai.onnx=16"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("state: float32[2x?x128]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("If: 25"), std::string::npos) << r.out;
}

TEST(Info, ConvertIsLosslessOnDisk) {
    std::string tmp = test::tempDir("convert");
    auto r = test::runCli({"convert", test::realModel("silero_vad_legacy.onnx"), tmp + "/out.onnx"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto a = test::runCli({"info", test::realModel("silero_vad_legacy.onnx"), "--json"});
    auto b = test::runCli({"info", tmp + "/out.onnx", "--json"});
    EXPECT_EQ(a.out, b.out);
}
