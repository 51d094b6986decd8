// The generated models (tests/gen) stand in for users' PyTorch exports, so they must be what they
// claim: exporter-style names, the shape chains, symbolic dims that really vary, and runnable.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "eval/Interpreter.h"
#include "eval/RunSupport.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "TestSupport.h"

using namespace passlens;

namespace {

std::string genModel(const std::string& name) { return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + name + ".onnx"; }

std::map<std::string, int> opCounts(const ir::Graph& g) {
    std::map<std::string, int> c;
    for (auto n : g.nodeOrder()) ++c[g.node(n).opType];
    return c;
}

eval::RunOptions runWith(const std::vector<std::pair<std::string, int64_t>>& dims) {
    eval::RunOptions o;
    o.dims = dims;
    return o;
}

}  // namespace

TEST(GenModels, BertLayerHasTheExportersShapeChains) {
    auto two = onnxio::importModelFile(genModel("bert_l2_scoped"));
    auto twelve = onnxio::importModelFile(genModel("bert_l12_scoped"));
    auto a = opCounts(two.graph), b = opCounts(twelve.graph);
    // Each layer adds 4 Reshape targets (q, k, v, context), each Shape → 2×Gather → 2×Unsqueeze → Concat.
    EXPECT_EQ(b["Shape"] - a["Shape"], 10 * 4);
    EXPECT_EQ(b["Concat"] - a["Concat"], 10 * 4);
    EXPECT_EQ(b["Unsqueeze"] - a["Unsqueeze"], 10 * 8);
    EXPECT_EQ(b["Softmax"], 12);
    EXPECT_EQ(b["Erf"], 12);
    EXPECT_EQ(b["ReduceMean"], 2 * (2 * 12 + 1));  // two LayerNorms a layer plus the embeddings'
    EXPECT_EQ((twelve.graph.nodeCount() - two.graph.nodeCount()) % 10, 0u);
}

TEST(GenModels, NameStylesAreTheExportersOwn) {
    auto scoped = onnxio::importModelFile(genModel("bert_l2_scoped"));
    auto flat = onnxio::importModelFile(genModel("bert_l24_flat"));
    int scopedInLayer1 = 0;
    for (auto n : scoped.graph.nodeOrder())
        scopedInLayer1 += scoped.graph.node(n).name.rfind("/encoder/layer.1/attention/self/", 0) == 0;
    EXPECT_GT(scopedInLayer1, 20);
    for (auto n : flat.graph.nodeOrder()) {
        const auto& node = flat.graph.node(n);
        ASSERT_EQ(node.name.find('/'), std::string::npos) << node.name;
        ASSERT_EQ(node.name.rfind(node.opType + "_", 0), 0u) << node.name;
    }
}

TEST(GenModels, NameScopesMetadataIsImportedAndExported) {
    auto m = onnxio::importModelFile(genModel("bert_l24_meta"));
    const ir::Graph& g = m.graph;
    size_t withScopes = 0, inLayer7 = 0;
    for (auto n : g.nodeOrder())
        for (const auto& kv : g.node(n).metadataProps)
            if (kv.key == "pkg.torch.onnx.name_scopes") {
                ++withScopes;
                inLayer7 += kv.value.find("'layer.7'") != std::string::npos;
            }
    EXPECT_EQ(withScopes, g.nodeCount());
    EXPECT_GT(inLayer7, 50u);

    auto path = test::tempDir("meta") + "/roundtrip.onnx";
    onnxio::exportModelFile(m, path);
    EXPECT_EQ(test::canonicalText(onnxio::importModelFile(path)), test::canonicalText(m));
    auto again = onnxio::importModelFile(path);
    EXPECT_EQ(again.graph.node(again.graph.nodeOrder()[5]).metadataProps, g.node(g.nodeOrder()[5]).metadataProps);
}

TEST(GenModels, EveryStyleRunsForSeveralBatchAndSequenceSizes) {
    for (const char* name : {"bert_l2_scoped", "gpt_l2_scoped"}) {
        auto m = onnxio::importModelFile(genModel(name));
        for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 3}, {2, 9}}) {
            std::vector<std::pair<std::string, int64_t>> dims{{"batch", batch}, {"seq", seq}};
            auto outs = eval::run(m, eval::randomInputs(m, 7, dims), runWith(dims));
            ASSERT_FALSE(outs.empty());
            EXPECT_EQ(outs[0]->dims[0], batch) << name;
            EXPECT_EQ(outs[0]->dims[1], seq) << name;
            EXPECT_TRUE(eval::summarize(*outs[0]).allFinite) << name;
        }
    }
    auto vit = onnxio::importModelFile(genModel("vit_l2_scoped"));
    std::vector<std::pair<std::string, int64_t>> dims{{"batch", 2}};
    auto outs = eval::run(vit, eval::randomInputs(vit, 7, dims), runWith(dims));
    ASSERT_EQ(outs.size(), 2u);
    EXPECT_EQ(outs[0]->dims, (std::vector<int64_t>{2, 17, 64}));
}

TEST(GenModels, ChainIsOneLongPath) {
    auto m = onnxio::importModelFile(genModel("chain_50k"));
    EXPECT_EQ(m.graph.nodeCount(), 50000u);
    for (auto n : m.graph.nodeOrder())
        for (auto v : m.graph.node(n).outputs) ASSERT_LE(m.graph.value(v).consumers.size(), 1u);
}
