// Explain: fusion-group refusals combined with the pattern-fusion passes' remarks, core API and CLI.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/Explain.h"
#include "examples/Examples.h"
#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "TestSupport.h"

using namespace passlens;

namespace {

ir::Model example(const std::string& id) {
    const auto* ex = examples::find(id);
    EXPECT_NE(ex, nullptr) << id;
    return ex->build();
}

std::string writeExample(const std::string& id) {
    std::string path = test::tempDir("explain") + "/" + id + ".onnx";
    onnxio::exportModelFile(example(id), path);
    return path;
}

}  // namespace

TEST(Explain, BlockedConvBatchNormNamesTheSecondConsumer) {
    auto m = example("blocked_fusion");
    const auto conv = *m.graph.findNode("conv");
    const auto tap = *m.graph.findNode("conv_tap.mean");
    auto e = analysis::explainNode(m, conv);
    ASSERT_EQ(e.nodes.size(), 1u);
    const auto& n = e.nodes[0];
    EXPECT_EQ(n.name, "conv");
    bool groups = false, pass = false;
    for (const auto& c : n.considered) {
        if (c.source == "fusion-groups") {
            groups = true;
            EXPECT_EQ(c.rule, "anchor-needs-elemwise-path");
            EXPECT_EQ(c.blockingNode, tap);
        }
        if (c.source == "fuse-conv-bn") {
            pass = true;
            EXPECT_FALSE(c.applied);
            EXPECT_EQ(c.blockingNode, tap);
            EXPECT_EQ(c.blockingNodeName, "conv_tap.mean");
            EXPECT_EQ(c.blockingValue, m.graph.node(conv).outputs[0]);
            EXPECT_NE(c.message.find("conv_tap.mean"), std::string::npos);
        }
    }
    EXPECT_TRUE(groups);
    EXPECT_TRUE(pass);
    EXPECT_TRUE(e.warnings.empty());
}

TEST(Explain, FusedNodeReportsItsGroupAndNoRefusal) {
    auto m = example("conv_bn_relu");
    auto e = analysis::explainModel(m, {});
    ASSERT_EQ(e.nodes.size(), m.graph.nodeCount());
    // Whatever else the example holds, its Conv is the anchor of a group with 2+ members.
    bool found = false;
    for (const auto& n : e.nodes) {
        if (n.opType != "Conv") continue;
        found = true;
        EXPECT_EQ(n.anchor, n.node);
        EXPECT_GE(n.groupMembers.size(), 2u);
        for (const auto& c : n.considered) EXPECT_NE(c.source, "fusion-groups") << c.message;
    }
    EXPECT_TRUE(found);
}

TEST(Explain, WithoutPassesOnlyFusionGroupsAreConsidered) {
    auto m = example("blocked_fusion");
    analysis::ExplainOptions o;
    o.runPatternPasses = false;
    auto e = analysis::explainNode(m, *m.graph.findNode("conv"), o);
    ASSERT_EQ(e.nodes[0].considered.size(), 1u);
    EXPECT_EQ(e.nodes[0].considered[0].source, "fusion-groups");
}

TEST(Explain, UnknownNodeIsBadInput) {
    auto m = example("blocked_fusion");
    EXPECT_THROW(analysis::findNodeForExplain(m.graph, "no_such_node"), Error);
    EXPECT_THROW(analysis::explainNode(m, 100000), Error);
}

TEST(Explain, CliTextNamesTheBlockingConsumer) {
    auto path = writeExample("blocked_fusion");
    auto r = test::runCli({"explain", path, "--node", "conv"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("conv_tap.mean"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("fold-conv-bn"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("anchor-needs-elemwise-path"), std::string::npos) << r.out;
}

TEST(Explain, CliJsonIsStable) {
    auto path = writeExample("blocked_fusion");
    auto r = test::runCli({"explain", path, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    for (const char* key : {"graph", "nodes_total", "kernels", "subgraph_nodes_not_grouped", "groups", "nodes", "warnings"}) EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["nodes"].size(), j["nodes_total"].get<size_t>());
    bool named = false;
    for (const auto& n : j["nodes"]) {
        for (const char* key : {"id", "name", "op", "pattern", "post_dominator", "group", "anchor", "group_members", "fused", "cost", "considered"})
            EXPECT_TRUE(n.contains(key)) << key;
        if (n["name"] != "conv") continue;
        for (const auto& c : n["considered"]) {
            for (const char* key : {"source", "rule", "outcome", "nodes", "blocking_node", "blocking_edge", "message"})
                EXPECT_TRUE(c.contains(key)) << key;
            if (c["source"] == "fuse-conv-bn" && c["blocking_node"] == "conv_tap.mean" && c["outcome"] == "refused") named = true;
        }
    }
    EXPECT_TRUE(named) << r.out;
}

TEST(Explain, CliBadInputExitsTwo) {
    auto path = writeExample("blocked_fusion");
    EXPECT_EQ(test::runCli({"explain", path, "--node", "nope"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"explain", path, "--max-depth", "x"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"explain", path, "--bogus"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"explain", test::tempDir("explain") + "/missing.onnx"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"explain"}).exitCode, 2);
}

TEST(Explain, SubgraphNodesAreCountedNotGrouped) {
    auto m = onnxio::importModelFile(test::realModel("silero_vad_v5.onnx"));
    auto e = analysis::explainModel(m);
    EXPECT_EQ(e.nodes.size(), m.graph.nodeCount());
    EXPECT_GT(e.subgraphNodes, 600u);
    EXPECT_NE(analysis::explanationToText(m.graph, e).find("not grouped"), std::string::npos);
}

TEST(Explain, NodeCostComesFromTheRegistry) {
    auto m = example("conv_bn_relu");
    auto e = analysis::explainNode(m, *m.graph.findNode("conv"));
    EXPECT_TRUE(e.nodes[0].cost.known);
    EXPECT_DOUBLE_EQ(e.nodes[0].cost.flops, 2.0 * 8 * 16 * 16 * 27 + 8 * 16 * 16);  // MACs plus bias
}
