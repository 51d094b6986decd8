// CSE of If nodes (merged only when their bodies are structurally equal) and the diff API's
// changed values and "came from" sentences.
#include <gtest/gtest.h>

#include <algorithm>

#include "examples/Builder.h"
#include "passes/Diff.h"
#include "PassTestSupport.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;
using passlens::test::hasRemark;
using passlens::test::runChecked;

namespace {

/// then: Add(x, c) with a body initializer c; else: op(x, x).
std::shared_ptr<Graph> branch(const std::string& op, float c) {
    auto g = std::make_shared<Graph>();
    g->name = op;
    ValueId x = g->addOuterScopeValue("x");
    ValueId out = g->addValue(op + "_out", TypeInfo::tensor(DataType::Float));
    if (op == "Add") {
        ValueId k = g->addInitializer("c", floatTensor({}, {c}));
        g->addNode(op, {x, k}, {out}, {}, "body_op");
    } else {
        g->addNode(op, {x, x}, {out}, {}, "body_op");
    }
    g->markOutput(out);
    return g;
}

/// Two If nodes on the same condition; the second's bodies are built from the given ops.
Model twoIfs(const std::string& thenOp2, float c2) {
    GraphBuilder b("ifs");
    auto cond = b.input("cond", DataType::Bool, {});
    (void)b.input("x", DataType::Float, {3});
    auto i1 = b.op("If", {cond}, {Attribute::makeGraph("then_branch", branch("Add", 1.f)), Attribute::makeGraph("else_branch", branch("Mul", 0))}, "if1");
    auto i2 = b.op("If", {cond}, {Attribute::makeGraph("then_branch", branch(thenOp2, c2)), Attribute::makeGraph("else_branch", branch("Mul", 0))}, "if2");
    b.output(b.op("Sub", {i1, i2}, {}, "sub"));
    return b.finish();
}

}  // namespace

TEST(CseBodies, IfNodesWithEqualBodiesMerged) {
    Model m = twoIfs("Add", 1.f);
    auto run = runChecked(m, "cse");
    EXPECT_EQ(run.before.at("If"), 2);
    EXPECT_EQ(run.after.at("If"), 1);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "value-numbering", "if2 computes the same value as if1 (equal bodies)"));
    const Node& sub = m.graph.node(*m.graph.findNode("sub"));
    EXPECT_EQ(sub.inputs[0], sub.inputs[1]);
}

TEST(CseBodies, IfNodesWithDifferentOpsNotMerged) {
    Model m = twoIfs("Mul", 1.f);
    auto run = runChecked(m, "cse");
    EXPECT_EQ(run.after.at("If"), 2);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "value-numbering",
                          "not merged: if2 has the same op and inputs as if1 but different bodies"));
}

TEST(CseBodies, IfNodesWithDifferentBodyInitializersNotMerged) {
    Model m = twoIfs("Add", 2.f);
    auto run = runChecked(m, "cse");
    EXPECT_EQ(run.after.at("If"), 2);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Missed, "value-numbering", "but different bodies"));
}

TEST(CseBodies, IfNodesOnDifferentConditionsNotCompared) {
    GraphBuilder b("ifs_cond");
    auto c1 = b.input("c1", DataType::Bool, {});
    auto c2 = b.input("c2", DataType::Bool, {});
    (void)b.input("x", DataType::Float, {3});
    auto i1 = b.op("If", {c1}, {Attribute::makeGraph("then_branch", branch("Add", 1.f)), Attribute::makeGraph("else_branch", branch("Mul", 0))}, "if1");
    auto i2 = b.op("If", {c2}, {Attribute::makeGraph("then_branch", branch("Add", 1.f)), Attribute::makeGraph("else_branch", branch("Mul", 0))}, "if2");
    b.output(b.op("Sub", {i1, i2}, {}, "sub"));
    Model m = b.finish();
    auto run = runChecked(m, "cse");
    EXPECT_EQ(run.after.at("If"), 2);
    for (const auto& r : run.result.remarks) EXPECT_NE(r.rule, "value-numbering") << r.message;
}

// ---- diff --------------------------------------------------------------------------------------------

TEST(DiffApi, CameFromSentenceAndChangedValues) {
    GraphBuilder b("chain");
    auto x = b.input("x", DataType::Float, {2, 3});
    auto a = b.op("Mul", {x, b.constant("c1", floatTensor({3}, {1, 2, 3}))}, {}, "MatMul_12");
    auto y = b.op("Mul", {a, b.constant("c2", floatTensor({3}, {2, 2, 2}))}, {}, "Add_13");
    b.output(b.op("Abs", {y}, {}, "abs"));
    Model m = b.finish();
    const Model before = m;
    const ValueId out = m.graph.node(*m.graph.findNode("Add_13")).outputs[0];
    test::runPassOnce("algebraic", m);
    const GraphDiff d = diffGraphs(before.graph, m.graph);
    ASSERT_EQ(d.addedNodes.size(), 1u);
    ASSERT_EQ(d.cameFrom.size(), 1u);
    EXPECT_EQ(d.cameFrom[0], "Add_13 came from MatMul_12 + Add_13");
    EXPECT_EQ(cameFromSentence(before, m, d.addedNodes[0]), d.cameFrom[0]);
    EXPECT_EQ(d.removedNodes.size(), 2u);
    // The chain's result keeps its id but has a new producer.
    EXPECT_NE(std::find(d.changedValues.begin(), d.changedValues.end(), out), d.changedValues.end());
    const ValueId xId = *m.graph.findValue("x");
    EXPECT_EQ(std::find(d.changedValues.begin(), d.changedValues.end(), xId), d.changedValues.end());
}

TEST(DiffApi, TypeChangeIsAChangedValueAndOriginalNodesHaveNoCameFrom) {
    GraphBuilder b("types");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Add", {b.op("Relu", {x}, {}, "relu"), b.constant("bias", floatTensor({3}, {1, 2, 3}))}, {}, "add"));
    Model m = b.finish();
    Model after = m;
    EXPECT_TRUE(diffGraphs(m.graph, after.graph).changedValues.empty());  // a snapshot copy shares payloads
    const ValueId r = after.graph.node(*after.graph.findNode("relu")).outputs[0];
    after.graph.value(r).type = TypeInfo::tensor(DataType::Float, Shape{{Dim::of(6)}});
    const GraphDiff d = diffGraphs(m.graph, after.graph);
    EXPECT_EQ(d.changedValues, (std::vector<ValueId>{r}));
    EXPECT_TRUE(d.addedNodes.empty());
    EXPECT_TRUE(d.cameFrom.empty());
    EXPECT_EQ(cameFromSentence(m, after, *after.graph.findNode("relu")), "relu is an original node");
    Model refolded = m;  // same contents, new payload: a changed constant
    const ValueId bias = *refolded.graph.findValue("bias");
    refolded.graph.setInitializer(bias, floatTensor({3}, {1, 2, 3}, "bias"));
    EXPECT_EQ(diffGraphs(m.graph, refolded.graph).changedValues, (std::vector<ValueId>{bias}));
}

namespace {

/// Loop body: v' = v + step (a body initializer), cond passed through.
std::shared_ptr<Graph> loopBody(float step) {
    auto g = std::make_shared<Graph>();
    g->name = "body";
    (void)g->addInput("i", TypeInfo::tensor(DataType::Int64, Shape{}));
    ValueId c = g->addInput("c", TypeInfo::tensor(DataType::Bool, Shape{}));
    ValueId v = g->addInput("v", TypeInfo::tensor(DataType::Float, Shape{{Dim::of(3)}}));
    ValueId s = g->addInitializer("step", floatTensor({}, {step}));
    ValueId c2 = g->addValue("c_out", TypeInfo::tensor(DataType::Bool, Shape{}));
    ValueId v2 = g->addValue("v_out", TypeInfo::tensor(DataType::Float, Shape{{Dim::of(3)}}));
    g->addNode("Identity", {c}, {c2}, {}, "keep_going");
    g->addNode("Add", {v, s}, {v2}, {}, "step_add");
    g->markOutput(c2);
    g->markOutput(v2);
    return g;
}

Model twoLoops(float step2) {
    GraphBuilder b("loops");
    auto x = b.input("x", DataType::Float, {3});
    auto trip = b.ints("trip", {3});
    auto cond = b.constant("cond", makeTensorOf<uint8_t>(DataType::Bool, {}, {1}));
    auto l1 = b.op("Loop", {trip, cond, x}, {Attribute::makeGraph("body", loopBody(1.f))}, "loop1");
    auto l2 = b.op("Loop", {trip, cond, x}, {Attribute::makeGraph("body", loopBody(step2))}, "loop2");
    auto sum = b.op("Add", {l1, l2}, {}, "sum");
    b.output(sum);
    Model m = b.finish();
    for (ValueId v : {l1, l2, sum})  // Loop outputs get no shape from inference; the checker wants one on outputs
        m.graph.value(v).type = TypeInfo::tensor(DataType::Float, Shape{{Dim::of(3)}});
    return m;
}

}  // namespace

TEST(CseBodies, LoopsWithEqualBodiesMergedUnequalKept) {
    Model same = twoLoops(1.f);
    ASSERT_FALSE(onnxio::checkModel(same).has_value()) << onnxio::checkModel(same).value_or("");
    auto run = runChecked(same, "cse");
    EXPECT_EQ(run.before.at("Loop"), 2);
    EXPECT_EQ(run.after.at("Loop"), 1);
    EXPECT_TRUE(hasRemark(run.result, RemarkKind::Applied, "value-numbering", "loop2 computes the same value as loop1 (equal bodies)"));
    Model different = twoLoops(2.f);
    auto run2 = runChecked(different, "cse");
    EXPECT_EQ(run2.after.at("Loop"), 2);
    EXPECT_TRUE(hasRemark(run2.result, RemarkKind::Missed, "value-numbering", "loop2 has the same op and inputs as loop1 but different bodies"));
}
