// Teaching examples: each one builds, passes the ONNX checker at opset 17, round-trips through a
// file, and shows the structure its lesson is about.
#include <gtest/gtest.h>

#include <filesystem>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Examples.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {

size_t countOps(const ir::Graph& g, const std::string& op) {
    size_t n = 0;
    for (ir::NodeId id : g.nodeOrder()) n += g.node(id).opType == op;
    return n;
}

}  // namespace

TEST(Examples, EveryExamplePassesTheOnnxCheckerAtOpset17) {
    ASSERT_GE(examples::all().size(), 6u);
    const std::string dir = test::tempDir("examples");
    for (const auto& ex : examples::all()) {
        SCOPED_TRACE(ex.id);
        ir::Model m = ex.build();
        EXPECT_EQ(m.opsetFor(""), 17);
        EXPECT_EQ(onnxio::checkModel(m), std::nullopt);
        const std::string path = dir + "/" + ex.id + ".onnx";
        onnxio::exportModelFile(m, path);
        EXPECT_EQ(onnxio::checkModelFile(path), std::nullopt);
        ir::Model back = onnxio::importModelFile(path);
        EXPECT_EQ(back.graph.nodeCount(), m.graph.nodeCount());
    }
}

// The checker does not check shapes through Conv weights: running each example does.
TEST(Examples, EveryExampleRunsInTheInterpreter) {
    for (const auto& ex : examples::all()) {
        SCOPED_TRACE(ex.id);
        ir::Model m = ex.build();
        auto outputs = eval::run(m, eval::randomInputs(m, 3));
        EXPECT_EQ(outputs.size(), m.graph.outputs().size());
        EXPECT_FALSE(outputs.empty());
    }
}

TEST(Examples, IdsAreUniqueAndFindable) {
    for (const auto& ex : examples::all()) {
        ASSERT_NE(examples::find(ex.id), nullptr);
        EXPECT_EQ(examples::find(ex.id)->id, ex.id);
        EXPECT_FALSE(ex.topic.empty());
    }
    EXPECT_EQ(examples::find("no_such_example"), nullptr);
}

TEST(Examples, TransformerBlockHasDecomposedLayerNormAndErfGelu) {
    ir::Model m = examples::find("transformer_block")->build();
    const auto& g = m.graph;
    EXPECT_EQ(countOps(g, "ReduceMean"), 4u);  // two LayerNorms, mean and variance each
    EXPECT_EQ(countOps(g, "Pow"), 2u);
    EXPECT_EQ(countOps(g, "Sqrt"), 2u);
    EXPECT_EQ(countOps(g, "Erf"), 1u);
    EXPECT_EQ(countOps(g, "Softmax"), 1u);
    EXPECT_GE(countOps(g, "MatMul"), 6u);
    // ε is a scalar added to the variance.
    auto addEps = g.findNode("ln1.add_eps");
    ASSERT_TRUE(addEps);
    EXPECT_EQ(g.node(*addEps).opType, "Add");
}

TEST(Examples, BlockedFusionConvOutputHasTwoConsumers) {
    ir::Model m = examples::find("blocked_fusion")->build();
    const auto& g = m.graph;
    auto conv = g.findNode("conv");
    ASSERT_TRUE(conv);
    const auto& out = g.value(g.node(*conv).outputs[0]);
    ASSERT_EQ(out.consumers.size(), 2u);
    bool feedsBn = false;
    for (auto c : out.consumers) feedsBn |= g.node(c).opType == "BatchNormalization";
    EXPECT_TRUE(feedsBn);
}

TEST(Examples, CleanupExampleHasDuplicateConstantAndDeadWork) {
    ir::Model m = examples::find("cleanup_opportunities")->build();
    const auto& g = m.graph;
    EXPECT_EQ(countOps(g, "MatMul"), 2u);
    // The dead branch's last node output is read by nobody and is not a graph output.
    auto dead = g.findNode("dead.mul");
    ASSERT_TRUE(dead);
    const auto& v = g.value(g.node(*dead).outputs[0]);
    EXPECT_TRUE(v.consumers.empty());
    EXPECT_FALSE(v.isGraphOutput);
    // The folding chain reads only initializers.
    auto sq = g.findNode("fold.sqrt");
    ASSERT_TRUE(sq);
    EXPECT_TRUE(g.value(g.node(*sq).inputs[0]).isConstant());
}

TEST(Examples, BranchyExampleHasJoinsWithSeveralPaths) {
    ir::Model m = examples::find("branchy_dominators")->build();
    const auto& g = m.graph;
    auto cat = g.findNode("join2");
    ASSERT_TRUE(cat);
    EXPECT_EQ(g.node(*cat).inputs.size(), 3u);
    EXPECT_EQ(g.outputs().size(), 2u);
}
