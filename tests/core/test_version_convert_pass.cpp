// version-convert as a registered pass: the upgrade goes through the Rewriter node by node, so it
// has a change log naming what the converter changed, keeps the ids of the nodes it did not touch
// (the stepper's diff is the conversion, not the whole graph), computes the same outputs, and a
// second run changes nothing.
#include <gtest/gtest.h>

#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "onnx/VersionConvert.h"
#include "passes/Diff.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

PipelineResult convert(Model& m, int64_t target) {
    PassManager pm;
    pm.addPass("version-convert");
    PipelineOptions o;
    o.pass.targetOpset = target;
    return pm.run(m, o);
}

std::map<std::string, int> opCounts(const Graph& g) {
    std::map<std::string, int> ops;
    for (NodeId n : g.nodeOrder()) ++ops[g.node(n).opType];
    return ops;
}

Model clipThenRelu() {
    GraphBuilder b("clip", 9);
    auto x = b.input("x", DataType::Float, {2, 3});
    auto c = b.op("Clip", {x}, {Attribute::makeFloat("min", 0.f), Attribute::makeFloat("max", 6.f)}, "clip");
    b.output(b.op("Relu", {c}, {}, "relu"));
    return b.finish();
}

}  // namespace

TEST(VersionConvertPass, ClipAttributesBecomeInputsAsAReplacedNode) {
    Model m = clipThenRelu();
    const Model before = m;
    const PipelineResult r = convert(m, 14);
    ASSERT_EQ(r.steps.size(), 1u);
    const PassResult& step = r.steps[0].result;
    EXPECT_EQ(step.name, "version-convert");
    EXPECT_EQ(m.opsetFor(""), 14);
    // Clip was replaced (its bounds became inputs); Relu is untouched and keeps its id.
    const GraphDiff d = diffGraphs(before.graph, m.graph);
    ASSERT_EQ(d.removedNodes.size(), 1u);
    EXPECT_EQ(before.graph.node(d.removedNodes[0]).opType, "Clip");
    EXPECT_TRUE(d.changedNodes.empty());
    for (NodeId n : before.graph.nodeOrder()) {
        if (before.graph.node(n).opType == "Relu") { EXPECT_TRUE(m.graph.hasNode(n)); }
    }
    bool replacedClip = false, opsetRecorded = false;
    for (const Change& c : step.changes) {
        if (c.kind == ChangeKind::Replaced && c.reason.find("attribute min removed") != std::string::npos &&
            c.reason.find("opset 9 → 14") != std::string::npos)
            replacedClip = true;
        for (const auto& name : c.nodeNames) opsetRecorded |= name == "opset import ai.onnx 14";
    }
    EXPECT_TRUE(replacedClip);
    EXPECT_TRUE(opsetRecorded);
    const ModelLevelDiff md = diffModelLevel(before, m);
    ASSERT_EQ(md.opsetChanges.size(), 1u);
    EXPECT_EQ(md.summary(), "ai.onnx opset 9 → 14");
    auto inputs = eval::randomInputs(before, 3);
    for (const auto& c : eval::compareOutputs(before, eval::run(m, inputs), eval::run(before, inputs), 1e-6, 1e-7))
        EXPECT_TRUE(c.ok) << c.name;
}

TEST(VersionConvertPass, SecondRunAndSameOpsetChangeNothing) {
    Model m = clipThenRelu();
    convert(m, 14);
    const std::string once = test::canonicalText(m);
    EXPECT_TRUE(convert(m, 14).steps[0].result.changes.empty());
    EXPECT_EQ(test::canonicalText(m), once);
    Model untouched = clipThenRelu();
    EXPECT_TRUE(convert(untouched, 0).steps[0].result.changes.empty());  // no target: nothing to do
    EXPECT_EQ(untouched.opsetFor(""), 9);
}

TEST(VersionConvertPass, BadTargetsAreBadInput) {
    Model m = clipThenRelu();
    for (int64_t target : {int64_t(7), int64_t(99)}) {
        try {
            convert(m, target);
            ADD_FAILURE() << "no error for opset " << target;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
        }
    }
    EXPECT_EQ(m.opsetFor(""), 9);  // nothing half-applied
}

TEST(VersionConvertPass, RealModelOpset9To17MatchesTheConverterAndTheOutputs) {
    // PP-OCRv4 rec: many attribute forms change between 9 and 17 (Clip, Unsqueeze, Squeeze, ...).
    const std::vector<std::pair<std::string, int64_t>> dims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
    Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    const Model before = m;
    const PipelineResult r = convert(m, 17);
    EXPECT_EQ(m.opsetFor(""), 17);
    EXPECT_FALSE(onnxio::checkModel(m).has_value()) << *onnxio::checkModel(m);
    // The same ops as the converter's own output: the pass applied all of it.
    EXPECT_EQ(opCounts(m.graph), opCounts(onnxio::upgradeOpset(before, 17).graph));
    // Only the converted nodes are new: most of the graph keeps its ids.
    const GraphDiff d = diffGraphs(before.graph, m.graph);
    EXPECT_GT(d.removedNodes.size(), 0u);
    EXPECT_LT(d.removedNodes.size() * 4, before.graph.nodeCount()) << "the conversion replaced most of the graph";
    size_t replaced = 0;
    for (const Change& c : r.steps[0].result.changes) replaced += c.kind == ChangeKind::Replaced;
    EXPECT_GT(replaced, 0u);
    EXPECT_LE(replaced, d.removedNodes.size());
    auto inputs = eval::randomInputs(before, 5, dims);
    eval::RunOptions ro;
    ro.dims = dims;
    for (const auto& c : eval::compareOutputs(before, eval::run(m, inputs, ro), eval::run(before, inputs, ro), 1e-4, 1e-5))
        EXPECT_TRUE(c.ok) << c.name << " " << c.maxAbs;
    // Idempotent: at the target already, a second run changes nothing.
    EXPECT_TRUE(convert(m, 17).steps[0].result.changes.empty());
}
