// core/hierarchy: scope paths from metadata and names, repeated blocks in flat-named models,
// sections for chains, the structural hash, and the bounds the view relies on.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "HierarchyModels.h"
#include "TestSupport.h"
#include "onnx/Import.h"
#include "hierarchy/Hierarchy.h"

using namespace passlens;
using namespace passlens::hierarchy;
using passlens::test::kOpsPerLayer;
using passlens::test::LayerNaming;

TEST(NameScopes, ParsesPythonListReprDroppingEmptyEntries) {
    EXPECT_EQ(parseNameScopes("['', 'encoder', 'layer.3', 'attention']"),
              (std::vector<std::string>{"encoder", "layer.3", "attention"}));
    EXPECT_EQ(parseNameScopes("[\"a\", 'b\\'c']"), (std::vector<std::string>{"a", "b'c"}));
    EXPECT_TRUE(parseNameScopes("[]").empty());
    EXPECT_EQ(parseNameScopes("['ok', 'unterminated"), (std::vector<std::string>{"ok"}));
}

TEST(NameScopes, FromSlashSeparatedNodeNames) {
    EXPECT_EQ(scopesFromNodeName("/encoder/layer.3/attention/self/MatMul"),
              (std::vector<std::string>{"encoder", "layer.3", "attention", "self"}));
    EXPECT_EQ(scopesFromNodeName("model/dense_1/BiasAdd"), (std::vector<std::string>{"model", "dense_1"}));
    EXPECT_TRUE(scopesFromNodeName("MatMul_123").empty());
    EXPECT_TRUE(scopesFromNodeName("p2o.Conv.7").empty());
    EXPECT_TRUE(scopesFromNodeName("/Constant").empty());
}

TEST(RepeatedBlocks, FindsTheRunOfIdenticalBlocks) {
    // prefix "ab", five blocks "cdefghij" (8 tokens), suffix "k".
    std::vector<uint32_t> t = {100, 101};
    for (int k = 0; k < 5; ++k)
        for (uint32_t i = 0; i < 8; ++i) t.push_back(i);
    t.push_back(102);
    auto run = findRepeatedBlocks(t, 4, 50);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->period, 8u);
    EXPECT_EQ(run->count, 5u);
    EXPECT_EQ(run->start, 2u);
}

TEST(RepeatedBlocks, CutCostPicksTheAlignment) {
    std::vector<uint32_t> t;
    for (int k = 0; k < 6; ++k)
        for (uint32_t i = 0; i < 8; ++i) t.push_back(i);
    std::vector<uint32_t> cost(t.size() + 1, 5);
    for (size_t i = 3; i < cost.size(); i += 8) cost[i] = 1;  // cheap boundaries before token 3 of each block
    auto run = findRepeatedBlocks(t, 4, 50, &cost);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->start % 8, 3u);
    EXPECT_EQ(run->count, 5u);  // one block is lost to the shifted alignment
}

TEST(RepeatedBlocks, NoneInAUniformChainOrNoise) {
    EXPECT_FALSE(findRepeatedBlocks(std::vector<uint32_t>(500, 7), 8, 100));
    std::vector<uint32_t> cycling;
    for (uint32_t i = 0; i < 600; ++i) cycling.push_back(i % 3);
    EXPECT_FALSE(findRepeatedBlocks(cycling, 8, 100));
    std::vector<uint32_t> noise;
    uint32_t s = 12345;
    for (int i = 0; i < 600; ++i) noise.push_back((s = s * 1103515245u + 12345u) >> 28);
    EXPECT_FALSE(findRepeatedBlocks(noise, 8, 100));
    EXPECT_FALSE(findRepeatedBlocks({1, 2, 3}, 8, 100));
}

namespace {

const Group* childNamed(const Hierarchy& h, const Group& parent, const std::string& name) {
    for (GroupId c : parent.children)
        if (h.group(c).name == name) return &h.group(c);
    return nullptr;
}

/// Every node is in exactly one group, and groupOfNode agrees with the groups' lists.
void expectPartition(const Hierarchy& h, const ir::Graph& g) {
    std::set<ir::NodeId> seen;
    for (const auto& grp : h.groups)
        for (ir::NodeId n : grp.nodes) {
            EXPECT_TRUE(seen.insert(n).second) << "node " << n << " in two groups";
            EXPECT_EQ(h.groupOf(n), grp.id);
        }
    EXPECT_EQ(seen.size(), g.nodeOrder().size());
    EXPECT_EQ(h.root().nodeCount, g.nodeOrder().size());
}

void expectTwelveEncoderLayers(const Hierarchy& h) {
    const Group* enc = childNamed(h, h.root(), "encoder");
    ASSERT_NE(enc, nullptr);
    ASSERT_EQ(enc->children.size(), 12u);
    for (size_t i = 0; i < 12; ++i) {
        const Group& layer = h.group(enc->children[i]);
        EXPECT_EQ(layer.name, "layer." + std::to_string(i));
        EXPECT_EQ(layer.path, "encoder/layer." + std::to_string(i));
        EXPECT_EQ(layer.opCount, kOpsPerLayer);
        EXPECT_EQ(layer.identicalSiblings, 12u);
        ASSERT_TRUE(childNamed(h, layer, "norm"));
        EXPECT_EQ(childNamed(h, layer, "norm")->opCount, 9u);
    }
}

}  // namespace

TEST(Hierarchy, ScopesFromNodeNames) {
    ir::Model m = test::layeredModel(12, LayerNaming::Scoped);
    Hierarchy h = buildHierarchy(m.graph);
    EXPECT_EQ(h.naming, GroupSource::NodeNames);
    expectTwelveEncoderLayers(h);
    expectPartition(h, m.graph);
    auto found = h.findPath("encoder/layer.7/norm");
    ASSERT_TRUE(found);
    EXPECT_EQ(h.group(*found).depth, 3);
    EXPECT_TRUE(h.isAncestorOrSelf(*h.findPath("encoder"), *found));
    EXPECT_FALSE(h.isAncestorOrSelf(*h.findPath("encoder/layer.6"), *found));
}

TEST(Hierarchy, ScopesFromNameScopesMetadata) {
    ir::Model m = test::layeredModel(12, LayerNaming::Metadata);
    Hierarchy h = buildHierarchy(m.graph);
    EXPECT_EQ(h.naming, GroupSource::Metadata);
    expectTwelveEncoderLayers(h);
    expectPartition(h, m.graph);
}

TEST(Hierarchy, SummaryCountsOpsKindsAndParameters) {
    ir::Model m = test::layeredModel(3, LayerNaming::Scoped, 8);
    Hierarchy h = buildHierarchy(m.graph);
    const Group& layer = h.group(*h.findPath("encoder/layer.1"));
    // Two 8×8 weights, three 8-vectors and two scalars, float32.
    EXPECT_EQ(layer.parameterBytes, (2 * 64 + 3 * 8 + 2) * 4u);
    ASSERT_FALSE(layer.dominantOps.empty());
    EXPECT_EQ(layer.dominantOps.front().op, "Add");
    EXPECT_EQ(layer.dominantOps.front().count, 4u);
    EXPECT_LE(layer.dominantOps.size(), 3u);
}

TEST(Hierarchy, RepeatedBlocksInAFlatNamedModel) {
    ir::Model m = test::layeredModel(40, LayerNaming::Flat);
    Hierarchy h = buildHierarchy(m.graph);
    EXPECT_EQ(h.naming, GroupSource::RepeatedBlock);
    expectPartition(h, m.graph);
    size_t blocks = 0;
    for (GroupId c : h.root().children) {
        const Group& grp = h.group(c);
        if (grp.source != GroupSource::RepeatedBlock) continue;
        ++blocks;
        EXPECT_EQ(grp.opCount, kOpsPerLayer);
        EXPECT_EQ(grp.structuralHash, h.group(h.root().children.front()).structuralHash);
    }
    // The boundary between layers carries one live value (the residual stream), so blocks are the
    // layers, maybe one lost to alignment at the ends.
    EXPECT_GE(blocks, 39u);
    EXPECT_LE(h.root().nodes.size(), 2 * kOpsPerLayer);
}

TEST(Hierarchy, ChainsGetBoundedSectionsAndRanges) {
    ir::Model m = test::chainModel(12000);
    HierarchyOptions o;
    Hierarchy h = buildHierarchy(m.graph, o);
    expectPartition(h, m.graph);
    EXPECT_LE(h.root().children.size(), o.maxChildren);
    EXPECT_LE(h.root().nodes.size(), o.maxDirectNodes);
    for (const auto& grp : h.groups) {
        EXPECT_LE(grp.nodes.size(), o.maxDirectNodes) << grp.path;
        EXPECT_LE(grp.children.size(), o.maxChildren) << grp.path;
        EXPECT_NE(grp.source, GroupSource::RepeatedBlock) << grp.path;
    }
}

TEST(Hierarchy, SmallFlatModelStaysFlat) {
    ir::Model m = test::layeredModel(2, LayerNaming::Flat);
    Hierarchy h = buildHierarchy(m.graph);
    EXPECT_EQ(h.groups.size(), 1u);
    EXPECT_EQ(h.root().nodes.size(), m.graph.nodeOrder().size());
}

TEST(StructuralHash, EqualForIdenticalLayersDifferentAfterAChange) {
    ir::Model m = test::layeredModel(4, LayerNaming::Scoped);
    Hierarchy before = buildHierarchy(m.graph);
    const auto layerHash = [](const Hierarchy& h, int i) {
        return h.group(*h.findPath("encoder/layer." + std::to_string(i))).structuralHash;
    };
    EXPECT_EQ(layerHash(before, 0), layerHash(before, 3));
    EXPECT_EQ(before.group(*before.findPath("encoder/layer.0")).identicalSiblings, 4u);
    // Change one attribute in layer 2.
    for (ir::NodeId id : m.graph.nodeOrder()) {
        ir::Node& n = m.graph.node(id);
        if (n.opType == "ReduceMean" && n.name.find("layer.2/") != std::string::npos) {
            n.attr("axes")->ints = {1};
            break;
        }
    }
    Hierarchy after = buildHierarchy(m.graph);
    EXPECT_NE(layerHash(after, 2), layerHash(after, 0));
    EXPECT_EQ(layerHash(after, 1), layerHash(after, 0));
    EXPECT_EQ(after.group(*after.findPath("encoder/layer.0")).identicalSiblings, 3u);
    EXPECT_EQ(after.group(*after.findPath("encoder/layer.2")).identicalSiblings, 1u);
    // Names do not matter: renaming every node keeps the hash.
    for (ir::NodeId id : m.graph.nodeOrder()) m.graph.node(id).name += "_renamed";
    EXPECT_EQ(structuralHash(m.graph, after.membersOf(*after.findPath("encoder/layer.1"))), layerHash(after, 1));
}

// ---- generated PyTorch-export-style models (tests/gen, gen_models fixture) --------------------

namespace {

std::string genModel(const std::string& name) { return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + name + ".onnx"; }

/// The group whose children are the 24 encoder layers: all structurally identical.
const Group* layerStack(const Hierarchy& h) {
    for (const auto& g : h.groups)
        if (g.children.size() == 24 && h.group(g.children.front()).identicalSiblings >= 23) return &g;
    return nullptr;
}

}  // namespace

TEST(HierarchyGenerated, Bert24ScopedAndMetadataGiveTheLayers) {
    for (const char* name : {"bert_l24_scoped", "bert_l24_meta"}) {
        SCOPED_TRACE(name);
        ir::Model m = onnxio::importModelFile(genModel(name));
        Hierarchy h = buildHierarchy(m.graph);
        EXPECT_EQ(h.naming, std::string(name) == "bert_l24_meta" ? GroupSource::Metadata : GroupSource::NodeNames);
        const Group* stack = layerStack(h);
        ASSERT_NE(stack, nullptr);
        EXPECT_EQ(h.group(stack->children.front()).name, "layer.0");
        EXPECT_EQ(h.group(stack->children.back()).name, "layer.23");
        expectPartition(h, m.graph);
    }
}

TEST(HierarchyGenerated, Bert24FlatFindsTheLayersAsRepeatedBlocks) {
    ir::Model m = onnxio::importModelFile(genModel("bert_l24_flat"));
    Hierarchy h = buildHierarchy(m.graph);
    EXPECT_EQ(h.naming, GroupSource::RepeatedBlock);
    size_t blocks = 0;
    uint64_t hash = 0;
    for (GroupId c : h.root().children)
        if (h.group(c).source == GroupSource::RepeatedBlock) {
            ++blocks;
            if (!hash) hash = h.group(c).structuralHash;
            EXPECT_EQ(h.group(c).structuralHash, hash);
        }
    EXPECT_GE(blocks, 23u);
    EXPECT_LE(blocks, 24u);
    expectPartition(h, m.graph);
}

TEST(HierarchyGenerated, CliRendersTheLargestModelsWithDefaults) {
    const std::string out = std::string(PASSLENS_TEST_TMP) + "/render_large.svg";
    std::filesystem::create_directories(PASSLENS_TEST_TMP);
    for (const char* name : {"chain_50k", "bert_l320_flat", "bert_l320_scoped"}) {
        SCOPED_TRACE(name);
        auto r = test::runCli({"render", genModel(name), "-o", out});
        EXPECT_EQ(r.exitCode, 0) << r.err;
        EXPECT_NE(r.out.find("open groups"), std::string::npos) << r.out;
        EXPECT_GT(std::filesystem::file_size(out), 1000u);
    }
    auto bad = test::runCli({"render", genModel("bert_l24_scoped"), "-o", out, "--expand", "no/such/group"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("no group 'no/such/group'"), std::string::npos) << bad.err;
}
