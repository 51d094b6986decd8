// A Node& / Value& / id list kept across a Rewriter edit is a bug even when the node survives the
// edit: in the instrumented build (AddressSanitizer) every edit moves what the graph handed out to
// new memory, so a read through a kept reference stops the process (Graph::invalidateReferences).
// The death tests need that build; elsewhere they skip. Ids stay valid across edits in every build.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

#include "examples/Builder.h"
#include "passes/Rewriter.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

struct Chain {
    Model m;
    NodeId relu = kNone, neg = kNone;
};

/// x → Relu → Neg → y
Chain chain() {
    GraphBuilder b("chain");
    const ValueId x = b.input("x", DataType::Float, {2, 3});
    const ValueId r = b.op("Relu", {x}, {}, "relu");
    b.output(b.op("Neg", {r}, {}, "neg"));
    Chain c{b.finish()};
    c.relu = *c.m.graph.findNode("relu");
    c.neg = *c.m.graph.findNode("neg");
    return c;
}

/// Runs `body` with a Rewriter on a fresh chain.
template <class Body>
void withRewriter(Body body) {
    Chain c = chain();
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(c.m, c.m.graph, "test", "", changes, remarks);
    body(rw, c);
}

#if PASSLENS_REFERENCE_CHECKS
constexpr bool kChecked = true;
#else
constexpr bool kChecked = false;
#endif

}  // namespace

TEST(RewriterReferences, IdsStayValidAcrossEdits) {
    withRewriter([](passes::Rewriter& rw, Chain& c) {
        const Graph& g = rw.graph();
        const std::string before = g.node(c.neg).opType;
        rw.newValue("unused");
        rw.setAttribute(c.relu, Attribute::makeInt("note", 1), "test");
        EXPECT_EQ(g.node(c.neg).opType, before);  // read again through the id: fine
        EXPECT_EQ(g.node(c.relu).attrInt("note", 0), 1);
    });
}

TEST(RewriterReferencesDeathTest, NodeKeptAcrossAnEditOfAnotherNode) {
    if (!kChecked) GTEST_SKIP() << "needs the instrumented build";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // The kept node is not the one edited: the read is still caught.
    EXPECT_DEATH(withRewriter([](passes::Rewriter& rw, Chain& c) {
                     const Node& neg = rw.graph().node(c.neg);
                     rw.setAttribute(c.relu, Attribute::makeInt("note", 1), "test");
                     std::fprintf(stderr, "%zu\n", neg.opType.size());
                 }),
                 "heap-use-after-free");
}

TEST(RewriterReferencesDeathTest, ValueKeptAcrossANewValue) {
    if (!kChecked) GTEST_SKIP() << "needs the instrumented build";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(withRewriter([](passes::Rewriter& rw, Chain& c) {
                     const Value& out = rw.graph().value(rw.graph().node(c.relu).outputs[0]);
                     rw.newValue("fresh");
                     std::fprintf(stderr, "%zu\n", out.name.size());
                 }),
                 "heap-use-after-free");
}

TEST(RewriterReferencesDeathTest, NodeOrderWalkedWhileTheLoopEdits) {
    if (!kChecked) GTEST_SKIP() << "needs the instrumented build";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(withRewriter([](passes::Rewriter& rw, Chain&) {
                     size_t seen = 0;
                     for (NodeId n : rw.graph().nodeOrder()) {  // the list itself, not a copy
                         seen += n;
                         rw.newValue("in_loop");
                     }
                     std::fprintf(stderr, "%zu\n", seen);
                 }),
                 "heap-use-after-free");
}

TEST(RewriterReferences, RewriterOutlivingItsGraphEndsQuietly) {
    // The token the graph hands the Rewriter expires with the graph: ending the checks on a graph
    // that a pass erased (a branch of an inlined If) must not touch it.
    auto sub = std::make_shared<Graph>();
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    Model m = chain().m;
    auto rw = std::make_unique<passes::Rewriter>(m, *sub, "test", "", changes, remarks);
    sub.reset();
    rw.reset();
    SUCCEED();
}
