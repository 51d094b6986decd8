// Golden tests of the basic passes: one small graph per rule, positive and negative, with op
// counts, remark text, change log and provenance, idempotence and numerical equivalence.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "ir/Builder.h"
#include "ir/Printer.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "passes/Diff.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

std::map<std::string, int> opCounts(const Graph& g) {
    std::map<std::string, int> c;
    for (NodeId n : g.nodeOrder()) ++c[g.node(n).opType];
    return c;
}

/// Runs one pass; checks the outputs are unchanged numerically and that a second run changes nothing.
PassResult runChecked(Model& m, const std::string& pass) {
    Model original = m;
    auto inputs = eval::randomInputs(m, 1);
    auto before = eval::run(m, inputs);
    PipelineResult r = runPipeline(m, {pass});
    auto after = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, after, before, 1e-5, 1e-6)) EXPECT_TRUE(d.ok) << pass << ": " << d.name;
    Model again = m;
    PipelineResult second = runPipeline(again, {pass});
    EXPECT_FALSE(second.passes[0].changed) << pass << " is not idempotent";
    EXPECT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    return r.passes[0];
}

bool hasRemark(const PassResult& r, RemarkKind kind, const std::string& rule, const std::string& text) {
    for (const auto& m : r.remarks)
        if (m.kind == kind && m.rule == rule && m.message.find(text) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST(PassesBasic, AddZeroIsRemovedWhenShapesMatch) {
    GraphBuilder b("add_zero");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto z = b.constant("zero", floatTensor({3}, {0, 0, 0}));
    auto y = b.op("Add", {x, z}, {}, "add");
    b.output(b.op("Relu", {y}, {}, "relu"));
    Model m = b.finish();
    auto r = runChecked(m, "algebraic");
    EXPECT_EQ(opCounts(m.graph).count("Add"), 0u);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "add-zero", "add: add-zero")) << r.remarks.size();
}

TEST(PassesBasic, AddZeroThatBroadcastsIsKeptWithMissedRemark) {
    GraphBuilder b("add_zero_broadcast");
    auto x = b.input("x", DataType::Float, {3});
    auto z = b.constant("zero", floatTensor({2, 3}, {0, 0, 0, 0, 0, 0}));
    b.output(b.op("Relu", {b.op("Add", {x, z}, {}, "add")}, {}, "relu"));
    Model m = b.finish();
    auto r = runChecked(m, "algebraic");
    EXPECT_EQ(opCounts(m.graph)["Add"], 1);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "add-zero", "would change the output's shape or type"));
}

TEST(PassesBasic, DivByConstantBecomesMulWithProvenance) {
    GraphBuilder b("div_const");
    auto x = b.input("x", DataType::Float, {4});
    auto c = b.constant("four", floatTensor({1}, {4.f}));
    b.output(b.op("Relu", {b.op("Div", {x, c}, {}, "div")}, {}, "relu"));
    Model m = b.finish();
    NodeId div = *m.graph.findNode("div");
    auto r = runChecked(m, "algebraic");
    EXPECT_EQ(opCounts(m.graph)["Div"], 0);
    EXPECT_EQ(opCounts(m.graph)["Mul"], 1);
    bool found = false;
    for (const auto& ch : r.changes)
        if (ch.kind == ChangeKind::Replaced && ch.provenance == std::vector<NodeId>{div}) found = true;
    EXPECT_TRUE(found);
}

TEST(PassesBasic, NegNegAndIdentityVanish) {
    GraphBuilder b("negneg");
    auto x = b.input("x", DataType::Float, {4});
    auto n1 = b.op("Neg", {x}, {}, "neg1");
    auto n2 = b.op("Neg", {n1}, {}, "neg2");
    auto id = b.op("Identity", {n2}, {}, "id");
    b.output(b.op("Relu", {id}, {}, "relu"));
    Model m = b.finish();
    runChecked(m, "algebraic");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Relu", 1}}));
}

TEST(PassesBasic, TransposePairComposesToIdentityAndVanishes) {
    GraphBuilder b("transposes");
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t1 = b.op("Transpose", {x}, {Attribute::makeInts("perm", {0, 2, 1})}, "t1");
    auto t2 = b.op("Transpose", {t1}, {Attribute::makeInts("perm", {0, 2, 1})}, "t2");
    b.output(b.op("Relu", {t2}, {}, "relu"));
    Model m = b.finish();
    PipelineResult r = runPipeline(m, {"algebraic", "algebraic"});
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Relu", 1}}));
}

TEST(PassesBasic, GraphOutputNameSurvivesIdentityRemoval) {
    GraphBuilder b("out_name");
    auto x = b.input("x", DataType::Float, {4});
    auto r = b.op("Relu", {x}, {}, "relu");
    auto y = b.op("Identity", {r}, {}, "id");
    b.output(y);
    Model m = b.finish();
    std::string outName = m.graph.value(y).name;
    runChecked(m, "algebraic");
    EXPECT_EQ(m.graph.nodeCount(), 1u);
    EXPECT_EQ(m.graph.value(m.graph.outputs()[0]).name, outName);
}

TEST(PassesBasic, ConstantFoldingFoldsChainsAndShapes) {
    GraphBuilder b("fold");
    auto x = b.input("x", DataType::Float, {2, 6});
    auto a = b.constant("a", floatTensor({6}, {1, 2, 3, 4, 5, 6}));
    auto c = b.op("Mul", {a, b.scalar("two", 2.f)}, {}, "mul_const");
    auto shape = b.op("Shape", {x}, {}, "shape");
    auto y = b.op("Add", {x, c}, {}, "add");
    b.output(b.op("Reshape", {y, shape}, {}, "reshape"));
    Model m = b.finish();
    auto r = runChecked(m, "constant-folding");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Add", 1}, {"Reshape", 1}}));
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "fold-shape", "shape folded: input shape is static"));
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "fold-node", "mul_const folded to a constant"));
}

TEST(PassesBasic, ConstantFoldingRespectsTheSizeLimit) {
    GraphBuilder b("fold_limit");
    auto x = b.input("x", DataType::Float, {1});
    auto shape = b.ints("big_shape", {4096, 4096});
    auto big = b.op("ConstantOfShape", {shape}, {Attribute::makeTensor("value", floatTensor({1}, {1.f}))}, "cos");
    b.output(b.op("Add", {big, x}, {}, "add"));
    Model m = b.finish();
    Model copy = m;
    PipelineOptions o;
    o.pass.foldSizeLimitBytes = 1 << 20;
    auto r = runPipeline(m, {"constant-folding"}, o).passes[0];
    EXPECT_EQ(opCounts(m.graph)["ConstantOfShape"], 1);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "fold-node", "not folded: output would be 64.0 MB, above the fold limit of 1.0 MB"));
}

TEST(PassesBasic, CseMergesDuplicatesButNotGraphOutputs) {
    GraphBuilder b("cse");
    auto x = b.input("x", DataType::Float, {4});
    auto w1 = b.constant("w1", floatTensor({4}, {1, 2, 3, 4}));
    auto w2 = b.constant("w2", floatTensor({4}, {1, 2, 3, 4}));
    auto m1 = b.op("Mul", {x, w1}, {}, "m1");
    auto m2 = b.op("Mul", {w2, x}, {}, "m2");  // commutative, other initializer with the same bytes
    b.output(b.op("Add", {m1, m2}, {}, "add"));
    auto s1 = b.op("Sigmoid", {x}, {}, "s1");
    auto s2 = b.op("Sigmoid", {x}, {}, "s2");
    b.output(s1);
    b.output(s2);
    Model m = b.finish();
    auto r = runChecked(m, "cse");
    EXPECT_EQ(opCounts(m.graph)["Mul"], 1);
    EXPECT_EQ(m.graph.initializerOrder().size(), 1u);
    EXPECT_EQ(opCounts(m.graph)["Sigmoid"], 2);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "cse", "not eliminated: s2 computes a graph output"));
}

TEST(PassesBasic, CseLeavesRandomOpsAlone) {
    GraphBuilder b("cse_random");
    auto x = b.input("x", DataType::Float, {4});
    auto r1 = b.op("RandomUniformLike", {x}, {}, "r1");
    auto r2 = b.op("RandomUniformLike", {x}, {}, "r2");
    b.output(b.op("Add", {r1, r2}, {}, "add"));
    Model m = b.finish();
    runPipeline(m, {"cse"});
    EXPECT_EQ(opCounts(m.graph)["RandomUniformLike"], 2);
}

TEST(PassesBasic, DceRemovesDeadBranchAndUnusedInitializer) {
    GraphBuilder b("dce");
    auto x = b.input("x", DataType::Float, {4});
    auto w = b.constant("unused_w", floatTensor({4}, {1, 2, 3, 4}));
    auto dead = b.op("Mul", {x, w}, {}, "dead_mul");
    b.op("Relu", {dead}, {}, "dead_relu");
    b.output(b.op("Sigmoid", {x}, {}, "live"));
    Model m = b.finish();
    auto r = runChecked(m, "dce");
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Sigmoid", 1}}));
    EXPECT_TRUE(m.graph.initializerOrder().empty());
    size_t removed = 0;
    for (const auto& c : r.changes) removed += c.kind == ChangeKind::Removed;
    EXPECT_EQ(removed, 3u);
}

TEST(PassesBasic, UnknownPassNameListsValidOnes) {
    auto r = test::runCli({"optimize", test::realModel("silero_vad_v5.onnx"), "-o", test::tempDir("opt_bad") + "/o.onnx", "--passes", "nope"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("unknown pass 'nope' (valid passes: constant-folding"), std::string::npos) << r.err;
}

// ---- real models -------------------------------------------------------------------------------

namespace {

struct RealCase {
    std::string file;
    std::vector<std::pair<std::string, int64_t>> dims;
};

std::vector<ir::TensorPtr> inputsFor(const Model& m, const RealCase& c) {
    if (c.file == "silero_vad_v5.onnx")
        return {randomFloats({1, 576}, 3), floatTensor({2, 1, 128}, std::vector<float>(256, 0.f)), int64Tensor({}, {16000})};
    if (c.file == "silero_vad_legacy.onnx")
        return {randomFloats({1, 512}, 3), int64Tensor({}, {16000}), floatTensor({2, 1, 64}, std::vector<float>(128, 0.f)),
                floatTensor({2, 1, 64}, std::vector<float>(128, 0.f))};
    return eval::randomInputs(m, 5, c.dims);
}

const std::vector<RealCase>& realCases() {
    static const std::vector<RealCase> cases = {
        {"ch_PP-OCRv4_det_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}}},
        {"ch_PP-OCRv4_rec_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}}},
        {"ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 64}}},
        {"silero_vad_legacy.onnx", {{"batch", 1}, {"sequence", 512}}},
        {"silero_vad_v5.onnx", {}},
    };
    return cases;
}

}  // namespace

TEST(PassesBasic, RealModelsBasicLevelIsCheckerCleanEquivalentAndSmaller) {
    for (const auto& c : realCases()) {
        Model m = onnxio::importModelFile(test::realModel(c.file));
        Model original = m;
        auto inputs = inputsFor(m, c);
        eval::RunOptions ro;
        ro.dims = c.dims;
        auto before = eval::run(m, inputs, ro);
        size_t nodesBefore = countNodesDeep(m.graph);
        runPipeline(m, PassRegistry::instance().pipeline(Level::Basic));
        size_t nodesAfter = countNodesDeep(m.graph);
        EXPECT_LT(nodesAfter, nodesBefore) << c.file;
        auto check = onnxio::checkModel(m);
        EXPECT_FALSE(check.has_value()) << c.file << ": " << check.value_or("");
        auto after = eval::run(m, inputs, ro);
        for (const auto& d : eval::compareOutputs(original, after, before, 1e-4, 1e-5))
            EXPECT_TRUE(d.ok) << c.file << " output " << d.name << " max abs " << d.maxAbs;
        std::cout << c.file << ": " << nodesBefore << " -> " << nodesAfter << " nodes (with subgraphs)\n";
    }
}

TEST(PassesBasic, SnapshotsDiffReproducesNodeSetsExactly) {
    Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    PipelineResult r = runPipeline(m, PassRegistry::instance().pipeline(Level::All));
    ASSERT_GE(r.snapshots.size(), 3u);
    // Payloads are shared between snapshots.
    const Graph& g0 = r.snapshots[1].model->graph;  // after constant folding made initializers
    const Graph& gl = r.snapshots.back().model->graph;
    size_t shared = 0;
    for (ValueId v : gl.initializerOrder())
        if (g0.hasValue(v) && g0.value(v).initializer && g0.value(v).initializer->data.sharesStorageWith(gl.value(v).initializer->data)) ++shared;
    EXPECT_GT(shared, 0u);
    for (size_t a = 0; a < r.snapshots.size(); ++a)
        for (size_t b = 0; b < r.snapshots.size(); ++b) {
            const Graph& ga = r.snapshots[a].model->graph;
            const Graph& gb = r.snapshots[b].model->graph;
            GraphDiff d = diffGraphs(ga, gb);
            std::set<NodeId> ids(ga.nodeOrder().begin(), ga.nodeOrder().end());
            for (NodeId n : d.removed) ids.erase(n);
            for (NodeId n : d.added) ids.insert(n);
            std::set<NodeId> expected(gb.nodeOrder().begin(), gb.nodeOrder().end());
            EXPECT_EQ(ids, expected) << a << " -> " << b;
            if (a == b) {
                EXPECT_TRUE(d.empty());
            }
        }
}
