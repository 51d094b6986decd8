// Golden tests of the structural model diff (core/diff) on small hand-built models: one behaviour
// each — renamed copies are `same`, interchangeable nodes resolved by their consumers, attribute and
// weight changes worded, removed/added nodes, bodies diffed recursively, names-only matching.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/ModelScramble.h"
#include "diff/DiffReport.h"
#include "diff/ModelDiff.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::diff;

namespace {

/// x → MatMul(w1) → LeakyRelu → Reshape(Shape(x)) → out1, and x → MatMul(w2) → Relu → Reshape(Shape(x))
/// → out2. The two Shape(x) nodes are interchangeable: only their consumers tell them apart.
/// `prefix` names everything; `shapesSwapped` creates the second Shape first (list order differs).
Model twoBranches(const std::string& prefix, bool shapesSwapped = false, float alpha = 0.1f, uint64_t w2seed = 2,
                  bool withRelu = true) {
    GraphBuilder b(prefix + "graph");
    auto x = b.input("x", DataType::Float, {2, 6});
    auto w1 = b.constant(prefix + "w1", randomFloats({6, 6}, 1));
    auto w2 = b.constant(prefix + "w2", randomFloats({6, 6}, w2seed));
    auto m1 = b.op("MatMul", {x, w1}, {}, prefix + "mm1");
    auto m2 = b.op("MatMul", {x, w2}, {}, prefix + "mm2");
    auto a1 = b.op("LeakyRelu", {m1}, {Attribute::makeFloat("alpha", alpha)}, prefix + "leaky");
    auto a2 = withRelu ? b.op("Relu", {m2}, {}, prefix + "relu") : m2;
    ValueId s1, s2;
    if (shapesSwapped) {
        s2 = b.op("Shape", {x}, {}, prefix + "shape2");
        s1 = b.op("Shape", {x}, {}, prefix + "shape1");
    } else {
        s1 = b.op("Shape", {x}, {}, prefix + "shape1");
        s2 = b.op("Shape", {x}, {}, prefix + "shape2");
    }
    auto r1 = b.op("Reshape", {a1, s1}, {}, prefix + "reshape1");
    auto r2 = b.op("Reshape", {a2, s2}, {}, prefix + "reshape2");
    b.graph().renameValue(r1, "out1");
    b.graph().renameValue(r2, "out2");
    b.output(r1);
    b.output(r2);
    return b.finish();
}

const NodeDiff& rowOfA(const ModelComparison& d, const Model& a, const std::string& name) {
    const GraphComparison& g = d.graphs.front();
    const NodeDiff* row = g.rowForA(*a.graph.findNode(name));
    EXPECT_NE(row, nullptr) << name;
    return *row;
}

std::string nameInB(const ModelComparison& d, const Model& b, const NodeDiff& row) {
    return row.b == kNone ? "<none>" : b.graph.node(row.b).name;
}

}  // namespace

TEST(ModelDiff, IdenticalModelsAreAllSameAndMatchedByName) {
    const Model a = twoBranches(""), b = twoBranches("");
    const ModelComparison d = compareModels(a, b);
    EXPECT_TRUE(d.identical());
    EXPECT_EQ(d.summary.same, a.graph.nodeCount());
    for (const NodeDiff& r : d.graphs[0].nodes) {
        EXPECT_EQ(r.how, MatchHow::Name);
        EXPECT_DOUBLE_EQ(r.score, 1.0);
    }
}

TEST(ModelDiff, RenamedCopyIsSameAndInterchangeableNodesFollowTheirConsumers) {
    const Model a = twoBranches("a_"), b = twoBranches("b_", /*shapesSwapped=*/true);
    const ModelComparison d = compareModels(a, b);
    EXPECT_TRUE(d.identical()) << diffToText(d);
    for (const std::string op : {"mm1", "mm2", "leaky", "relu", "shape1", "shape2", "reshape1", "reshape2"}) {
        const NodeDiff& r = rowOfA(d, a, "a_" + op);
        EXPECT_EQ(nameInB(d, b, r), "b_" + op);
    }
    // The Shape nodes are equal in op and inputs: told apart by the Reshape that reads each.
    EXPECT_EQ(rowOfA(d, a, "a_shape1").how, MatchHow::Neighbors);
    EXPECT_EQ(rowOfA(d, a, "a_shape2").how, MatchHow::Neighbors);
    EXPECT_EQ(rowOfA(d, a, "a_mm1").how, MatchHow::Weights);
}

TEST(ModelDiff, AttributeChangeIsWordedAndOnlyThatNodeChanges) {
    const Model a = twoBranches("a_"), b = twoBranches("b_", false, /*alpha=*/0.2f);
    const ModelComparison d = compareModels(a, b);
    EXPECT_EQ(d.summary.changed, 1u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInA + d.summary.onlyInB, 0u);
    const NodeDiff& r = rowOfA(d, a, "a_leaky");
    EXPECT_EQ(r.status, NodeStatus::Changed);
    ASSERT_EQ(r.changes.size(), 1u);
    EXPECT_EQ(r.changes[0], "attribute alpha 0.1 → 0.2");
    EXPECT_LT(r.score, 1.0);
}

TEST(ModelDiff, WeightChangeIsWordedWithTheLargestDifference) {
    const Model a = twoBranches("a_"), b = twoBranches("b_", false, 0.1f, /*w2seed=*/7);
    const ModelComparison d = compareModels(a, b);
    const NodeDiff& r = rowOfA(d, a, "a_mm2");
    EXPECT_EQ(nameInB(d, b, r), "b_mm2");
    EXPECT_EQ(r.status, NodeStatus::Changed);
    EXPECT_EQ(r.how, MatchHow::Structure);
    ASSERT_EQ(r.changes.size(), 1u);
    EXPECT_EQ(r.changes[0].rfind("input 1 values differ: max |Δ| ", 0), 0u) << r.changes[0];
    EXPECT_EQ(d.summary.changed, 1u) << diffToText(d);
}

TEST(ModelDiff, RemovedNodeIsOnlyInAAndItsConsumerIsStillMatched) {
    const Model a = twoBranches("a_"), b = twoBranches("b_", false, 0.1f, 2, /*withRelu=*/false);
    const ModelComparison d = compareModels(a, b);
    EXPECT_EQ(rowOfA(d, a, "a_relu").status, NodeStatus::OnlyInA);
    EXPECT_EQ(d.summary.onlyInA, 1u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInB, 0u);
    EXPECT_EQ(d.summary.changed, 0u);
    EXPECT_EQ(nameInB(d, b, rowOfA(d, a, "a_reshape2")), "b_reshape2");
    EXPECT_EQ(diffInShort(d), "removed 1 Relu");
}

TEST(ModelDiff, AddedNodeIsOnlyInB) {
    const Model a = twoBranches("a_", false, 0.1f, 2, false), b = twoBranches("b_");
    const ModelComparison d = compareModels(a, b);
    EXPECT_EQ(d.summary.onlyInB, 1u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInA + d.summary.changed, 0u);
    const NodeDiff& last = d.graphs[0].nodes.back();
    EXPECT_EQ(last.status, NodeStatus::OnlyInB);
    EXPECT_EQ(b.graph.node(last.b).opType, "Relu");
}

TEST(ModelDiff, NamesOnlyCannotMatchARenamedCopy) {
    const Model a = twoBranches("a_"), b = twoBranches("b_");
    DiffOptions names;
    names.namesOnly = true;
    const ModelComparison d = compareModels(a, b, names);
    // Only the producers of the graph outputs (same output value names) match.
    EXPECT_EQ(d.summary.same, 2u) << diffToText(d);
    EXPECT_EQ(d.summary.onlyInA, a.graph.nodeCount() - 2);
    EXPECT_TRUE(compareModels(a, b).identical());
}

TEST(ModelDiff, DifferentOpsNeverMatchStructurally) {
    // A Relu in A and a Sigmoid in B at the same place: one removed, one added, not a "change".
    auto build = [](const std::string& op) {
        GraphBuilder b("g");
        auto x = b.input("x", DataType::Float, {4});
        b.output(b.op(op, {x}, {}, op == "Relu" ? "r" : "s"));
        return b.finish();
    };
    Model a = build("Relu"), b = build("Sigmoid");
    b.graph.renameValue(b.graph.outputs()[0], "other");
    const ModelComparison d = compareModels(a, b);
    EXPECT_EQ(d.summary.onlyInA, 1u);
    EXPECT_EQ(d.summary.onlyInB, 1u);
}

TEST(ModelDiff, IfBodiesAreDiffedRecursively) {
    auto branch = [](float c) {
        auto g = std::make_shared<Graph>();
        ValueId x = g->addOuterScopeValue("x");
        ValueId k = g->addInitializer("c", floatTensor({}, {c}));
        ValueId out = g->addValue("body_out", TypeInfo::tensor(DataType::Float));
        g->addNode("Add", {x, k}, {out}, {}, "body_add");
        g->markOutput(out);
        return g;
    };
    auto build = [&](float c) {
        GraphBuilder b("ifs");
        auto cond = b.input("cond", DataType::Bool, {});
        (void)b.input("x", DataType::Float, {3});
        b.output(b.op("If", {cond}, {Attribute::makeGraph("then_branch", branch(c)), Attribute::makeGraph("else_branch", branch(0))}, "if"));
        return b.finish();
    };
    const Model a = build(1.f), b = build(2.f);
    const ModelComparison d = compareModels(a, b);
    ASSERT_EQ(d.graphs.size(), 3u);
    EXPECT_EQ(d.graphs[1].path, "if/then_branch");
    EXPECT_EQ(d.graphs[1].summary().changed, 1u);
    EXPECT_EQ(d.graphs[2].summary().same, 1u);
    EXPECT_EQ(d.graphs[0].summary().same, 1u);  // the If itself: its bodies are reported row by row
    const NodeDiff& body = d.graphs[1].nodes[0];
    ASSERT_EQ(body.changes.size(), 1u);
    EXPECT_EQ(body.changes[0], "input 1 values differ: max |Δ| 1");
}

TEST(ModelDiff, JsonFollowsTheCliContract) {
    const Model a = twoBranches("a_"), b = twoBranches("b_", false, 0.1f, 2, false);
    const auto j = diffToJson(compareModels(a, b));
    EXPECT_EQ(j["summary"]["same"], a.graph.nodeCount() - 1);
    EXPECT_EQ(j["summary"]["only_in_a"], 1);
    ASSERT_EQ(j["nodes"].size(), a.graph.nodeCount());
    for (const auto& n : j["nodes"]) {
        for (const char* key : {"a", "b", "status", "how", "score", "changes"}) EXPECT_TRUE(n.contains(key)) << key;
        if (n["status"] == "only_in_a") {
            EXPECT_EQ(n["a"], "a_relu");
            EXPECT_TRUE(n["b"].is_null());
            EXPECT_TRUE(n["how"].is_null());
        } else {
            EXPECT_GE(n["score"].get<double>(), 0.0);
            EXPECT_LE(n["score"].get<double>(), 1.0);
        }
    }
}

TEST(ModelDiff, ScrambleKeepsTheGraphValidAndRenamesEverythingInside) {
    const Model a = twoBranches("a_");
    test::ScrambledModel s = test::scrambleModel(a, 5);
    EXPECT_TRUE(s.model.graph.topologicalOrder().has_value());
    for (NodeId n : s.model.graph.nodeOrder()) EXPECT_EQ(s.newNameOf.at(n), s.model.graph.node(n).name);
    for (NodeId n : a.graph.nodeOrder()) EXPECT_FALSE(s.model.graph.findNode(a.graph.node(n).name).has_value());
    EXPECT_TRUE(s.model.graph.findValue("out1").has_value());   // graph outputs keep their names
    EXPECT_FALSE(s.model.graph.findValue("a_w1").has_value());  // initializers are inner values
}
