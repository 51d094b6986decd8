// Core IR invariants: stable ids, consumer bookkeeping, topological order, shared payloads.
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "ir/Error.h"
#include "ir/Verifier.h"

using namespace passlens::ir;

namespace {

Model chain() {
    GraphBuilder b("chain");
    auto x = b.input("x", DataType::Float, {1, 4});
    auto w = b.constant("w", randomFloats({4, 4}, 7));
    auto m = b.op("MatMul", {x, w}, {}, "mm");
    auto r = b.op("Relu", {m}, {}, "relu");
    auto s = b.op("Sigmoid", {r}, {}, "sig");
    b.output(s);
    return b.finish();
}

}  // namespace

TEST(IR, IdsSurviveCopiesAndAreNeverReused) {
    Model m = chain();
    Graph copy = m.graph;
    EXPECT_EQ(copy.nodeOrder(), m.graph.nodeOrder());
    NodeId relu = *m.graph.findNode("relu");
    NodeId sig = *m.graph.findNode("sig");
    // Rewire sig to read mm directly, then drop relu.
    m.graph.setNodeInput(sig, 0, m.graph.node(relu).inputs[0]);
    m.graph.eraseNode(relu);
    ValueId fresh = m.graph.addValue("extra");
    NodeId added = m.graph.addNode("Relu", {m.graph.node(sig).outputs[0]}, {fresh});
    EXPECT_GT(added, sig);
    EXPECT_NE(added, relu);
    EXPECT_TRUE(copy.hasNode(relu));  // the copy is independent
    EXPECT_FALSE(m.graph.hasNode(relu));
}

TEST(IR, ConsumersFollowMutations) {
    Model m = chain();
    Graph& g = m.graph;
    ValueId mm = *g.findValue("mm_out");
    ValueId x = *g.findValue("x");
    ASSERT_EQ(g.value(mm).consumers.size(), 1u);
    g.replaceAllUsesWith(mm, x);
    EXPECT_TRUE(g.value(mm).consumers.empty());
    EXPECT_EQ(g.value(x).consumers.size(), 2u);  // MatMul and Relu
}

TEST(IR, TopologicalOrderIsStableAndDetectsCycles) {
    Model m = chain();
    auto order = m.graph.topologicalOrder();
    ASSERT_TRUE(order);
    EXPECT_EQ(*order, m.graph.nodeOrder());
    // Move Sigmoid to the front: sorting restores the dependency order.
    m.graph.moveNodeBefore(*m.graph.findNode("sig"), m.graph.nodeOrder().front());
    m.graph.sortTopologically();
    EXPECT_EQ(m.graph.node(m.graph.nodeOrder().back()).name, "sig");
    // A cycle: mm reads sig's output.
    m.graph.setNodeInput(*m.graph.findNode("mm"), 0, *m.graph.findValue("sig_out"));
    EXPECT_FALSE(m.graph.topologicalOrder());
    EXPECT_THROW(m.graph.sortTopologically(), passlens::Error);
    EXPECT_FALSE(verifyModel(m).ok());
}

TEST(IR, CopiesSharePayloads) {
    Model m = chain();
    Model copy = m;
    ValueId w = *m.graph.findValue("w");
    EXPECT_TRUE(copy.graph.value(w).initializer->data.sharesStorageWith(m.graph.value(w).initializer->data));
}

TEST(IR, DuplicateProducerIsRejected) {
    Graph g;
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float));
    ValueId y = g.addValue("y");
    g.addNode("Relu", {x}, {y}, {}, "a");
    EXPECT_THROW(g.addNode("Relu", {x}, {y}, {}, "b"), passlens::Error);
}

TEST(IR, ShapesAreInferredByTheBuilder) {
    Model m = chain();
    const Value& s = m.graph.value(*m.graph.findValue("mm_out"));
    ASSERT_TRUE(s.type.isTensor());
    EXPECT_EQ(s.type.toString(), "float32[1x4]");
}

#include "ir/Printer.h"

TEST(IRPrinter, PrintsNodesWithTypesAndAttributes) {
    Model m = chain();
    std::string text = printModel(m);
    EXPECT_EQ(fileCheck(text, {"CHECK: graph chain(%x: float32[1x4])", "CHECK: @w = initializer float32[4x4]",
                               "CHECK: %mm_out: float32[1x4] = MatMul(%x, @w)", "CHECK-NOT: Conv",
                               "CHECK: = Relu(%mm_out)", "CHECK: return %sig_out"}),
              "")
        << text;
}

TEST(IRPrinter, FileCheckFailsWhenItShould) {
    std::string text = "a\nb\nc\n";
    EXPECT_EQ(fileCheck(text, {"CHECK: a", "CHECK: c"}), "");
    EXPECT_NE(fileCheck(text, {"CHECK: c", "CHECK: a"}), "");             // order matters
    EXPECT_NE(fileCheck(text, {"CHECK: a", "CHECK-NOT: b", "CHECK: c"}), "");  // b lies between
    EXPECT_NE(fileCheck(text, {"CHECK: a", "CHECK-NOT: c"}), "");         // trailing NOT
    EXPECT_NE(fileCheck(text, {"CHECK: z"}), "");
}
