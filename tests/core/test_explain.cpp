// Explain: fusion-group refusals combined with the pattern-fusion passes' remarks, core API and CLI.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "passes/PassManager.h"
#include "pipeline/Explain.h"
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
        // The Conv+BN fold fired: the explanation says so, naming both original nodes.
        bool folded = false;
        for (const auto& c : n.considered)
            if (c.source == "fuse-conv-bn" && c.applied) {
                folded = true;
                EXPECT_EQ(c.nodeNames, (std::vector<std::string>{"conv", "bn"}));
            }
        EXPECT_TRUE(folded);
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
    for (const char* key : {"graph", "nodes_total", "kernels", "subgraph_nodes_not_explained", "groups", "nodes", "warnings", "hints"}) EXPECT_TRUE(j.contains(key)) << key;
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

TEST(Explain, SubgraphNodesAreCountedNotExplained) {
    auto m = onnxio::importModelFile(test::realModel("silero_vad_v5.onnx"));
    auto e = analysis::explainModel(m);
    EXPECT_EQ(e.nodes.size(), m.graph.nodeCount());
    EXPECT_GT(e.subgraphNodes, 600u);
    EXPECT_NE(analysis::explanationToText(m.graph, e).find("not explained"), std::string::npos);
    // A node inside an If body is named as such, not as unknown.
    std::string inner;
    m.graph.forEachGraph([&](const ir::Graph& sg) {
        if (&sg != &m.graph && inner.empty() && sg.nodeCount() > 0) inner = sg.node(sg.nodeOrder().front()).displayName();
    });
    ASSERT_FALSE(inner.empty());
    try {
        analysis::findNodeForExplain(m.graph, inner);
        ADD_FAILURE() << "expected BadInput for " << inner;
    } catch (const Error& err) {
        EXPECT_NE(std::string(err.what()).find("subgraph"), std::string::npos) << err.what();
    }
}

TEST(Explain, NodeCostComesFromTheRegistry) {
    auto m = example("conv_bn_relu");
    auto e = analysis::explainNode(m, *m.graph.findNode("conv"));
    EXPECT_TRUE(e.nodes[0].cost.known);
    EXPECT_DOUBLE_EQ(e.nodes[0].cost.flops, 2.0 * 8 * 16 * 16 * 27 + 8 * 16 * 16);  // MACs plus bias
}

TEST(Explain, EveryRealModelExplainsEveryTopLevelNode) {
    for (const auto& file : test::realModelNames()) {
        SCOPED_TRACE(file);
        auto m = onnxio::importModelFile(test::realModel(file));
        auto e = analysis::explainModel(m);
        EXPECT_TRUE(e.warnings.empty()) << e.warnings.front();
        ASSERT_EQ(e.nodes.size(), m.graph.nodeCount());
        size_t refusals = 0;
        for (const auto& n : e.nodes) {
            ASSERT_GE(n.group, 0);
            EXPECT_NE(std::find(n.groupMembers.begin(), n.groupMembers.end(), n.node), n.groupMembers.end());
            for (const auto& c : n.considered) {
                EXPECT_FALSE(c.message.empty());
                EXPECT_FALSE(c.rule.empty()) << c.source;
                refusals += c.source == "fusion-groups";
            }
        }
        EXPECT_EQ(refusals, e.plan.refusals.size());
        auto j = analysis::explanationToJson(m.graph, e);
        EXPECT_EQ(j["nodes"].size(), m.graph.nodeCount());
    }
}

TEST(Explain, SymbolicShapesGiveAPinningHintAndPinningTightensGroups) {
    const std::string file = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    analysis::ExplainOptions o;
    o.runPatternPasses = false;
    auto loose = onnxio::importModelFile(file);
    auto e1 = analysis::explainModel(loose, o);
    ASSERT_FALSE(e1.hints.empty());
    EXPECT_NE(e1.hints[0].find("--dim"), std::string::npos);
    onnxio::ImportOptions io;
    io.pinnedDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 64}};
    auto pinned = onnxio::importModelFile(file, io);
    auto e2 = analysis::explainModel(pinned, o);
    const size_t before = std::stoul(e1.hints[0]), after = e2.hints.empty() ? 0 : std::stoul(e2.hints[0]);
    EXPECT_LT(after * 10, before) << "pinning should prove most broadcasts elementwise";
    // The symbolic shape engine already proves most loose shapes equal, so pinning may only keep
    // the kernel count or lower it, never raise it.
    EXPECT_LE(e2.plan.kernelCount(pinned.graph), e1.plan.kernelCount(loose.graph));
}

TEST(Explain, RemarksOfAnExistingRunGiveTheSameExplanation) {
    // The app explains with the stepper's run instead of running the passes again: for the same
    // extended pipeline the explanation must be the same, node for node.
    auto m = example("blocked_fusion");
    passes::PassManager pm;
    pm.addLevel(passes::Level::Extended);
    ir::Model copy = m;
    const passes::PipelineResult run = pm.run(copy);
    analysis::ExplainOptions fromRun;
    fromRun.remarks = std::make_shared<const analysis::FusionRemarks>(analysis::fusionRemarksOf(run));
    EXPECT_GT(fromRun.remarks->fusionPasses, 0u);
    EXPECT_NE(fromRun.remarks->source.find("stepper's run"), std::string::npos) << fromRun.remarks->source;
    const auto own = analysis::explainModel(m);
    const auto reused = analysis::explainModel(m, fromRun);
    EXPECT_EQ(analysis::explanationToText(m.graph, reused), analysis::explanationToText(m.graph, own));
    EXPECT_NE(own.remarksSource, reused.remarksSource);
    // The blocked Conv+BN fold is among them, so the comparison is not of two empty lists.
    const auto conv = *m.graph.findNode("conv");
    bool fold = false;
    for (const auto& n : reused.nodes)
        if (n.node == conv)
            for (const auto& c : n.considered) fold |= c.source == "fuse-conv-bn" && !c.applied;
    EXPECT_TRUE(fold);
}

TEST(Explain, ARunWithoutFusionPassesOffersNoRemarks) {
    auto m = example("blocked_fusion");
    passes::PassManager pm;
    pm.addPass("dce");
    ir::Model copy = m;
    const auto remarks = analysis::fusionRemarksOf(pm.run(copy));
    EXPECT_EQ(remarks.fusionPasses, 0u);
    EXPECT_TRUE(remarks.entries.empty());
}
