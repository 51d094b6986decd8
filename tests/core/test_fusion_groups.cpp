// Fusion groups (TVM FuseOps): golden tests on hand-made graphs, then properties on the real models.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "analysis/FusionGroups.h"
#include "examples/Examples.h"
#include "ir/Error.h"
#include "examples/Builder.h"
#include "onnx/Import.h"
#include "TestSupport.h"

using namespace passlens;
using analysis::FusionPlan;
using analysis::OpPattern;
using ir::Attribute;
using ir::DataType;
using ir::NodeId;
using ir::ValueId;

namespace {

NodeId nodeNamed(const ir::Model& m, const std::string& name) {
    auto n = m.graph.findNode(name);
    EXPECT_TRUE(n.has_value()) << name;
    return n.value_or(ir::kNone);
}

std::vector<std::string> memberNames(const ir::Model& m, const FusionPlan& plan, const std::string& of) {
    std::vector<std::string> out;
    for (NodeId n : plan.groupFor(nodeNamed(m, of))->members) out.push_back(m.graph.node(n).displayName());
    return out;
}

ValueId conv(ir::GraphBuilder& b, ValueId x, int cin, int cout, const std::string& name, uint64_t seed) {
    return b.op("Conv", {x, b.constant(name + ".w", ir::randomFloats({cout, cin, 3, 3}, seed, -0.5f, 0.5f))},
                {Attribute::makeInts("pads", {1, 1, 1, 1}), Attribute::makeInts("kernel_shape", {3, 3})}, name);
}

ValueId batchNorm(ir::GraphBuilder& b, ValueId x, int c, const std::string& name) {
    return b.op("BatchNormalization",
                {x, b.constant(name + ".s", ir::randomFloats({c}, 1, 0.5f, 1.5f)), b.constant(name + ".b", ir::randomFloats({c}, 2)),
                 b.constant(name + ".m", ir::randomFloats({c}, 3)), b.constant(name + ".v", ir::randomFloats({c}, 4, 0.5f, 2.f))},
                {}, name);
}

/// Every non-fused node has exactly one refusal with a known rule; fused nodes have none.
void expectRefusalsConsistent(const ir::Graph& g, const FusionPlan& plan) {
    std::set<std::string_view> codes(analysis::fusionRuleCodes().begin(), analysis::fusionRuleCodes().end());
    std::set<NodeId> refused;
    for (const auto& r : plan.refusals) {
        EXPECT_TRUE(codes.count(r.rule)) << "unknown rule " << r.rule;
        EXPECT_TRUE(refused.insert(r.node).second) << "two refusals for " << g.node(r.node).displayName();
        EXPECT_FALSE(r.message.empty());
    }
    for (NodeId n : g.nodeOrder()) {
        NodeId p = plan.postDominatorOf(n);
        bool joined = p != ir::kNone && plan.groupOf(n) == plan.groupOf(p);
        EXPECT_EQ(joined, refused.count(n) == 0) << g.node(n).displayName();
    }
}

}  // namespace

TEST(FusionGroups, ConvBatchNormReluChainFusesAroundTheAnchor) {
    ir::GraphBuilder b("chain");
    auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
    auto y = b.op("Relu", {batchNorm(b, conv(b, x, 3, 4, "conv", 5), 4, "bn")}, {}, "relu");
    b.output(b.op("Softmax", {y}, {}, "softmax"));
    auto m = b.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(memberNames(m, plan, "conv"), (std::vector<std::string>{"conv", "bn", "relu"}));
    const auto* grp = plan.groupFor(nodeNamed(m, "conv"));
    EXPECT_EQ(grp->anchor, nodeNamed(m, "conv"));
    EXPECT_EQ(grp->pattern, OpPattern::OutEWiseFusable);
    EXPECT_EQ(plan.groups.size(), 2u);
    EXPECT_EQ(plan.kernelCount(m.graph), 2u);
    EXPECT_EQ(plan.refusalFor(nodeNamed(m, "conv")), nullptr);
    // The anchored group (its record is Relu's) cannot absorb the Softmax; Softmax itself is Opaque.
    ASSERT_NE(plan.refusalFor(nodeNamed(m, "relu")), nullptr);
    EXPECT_EQ(plan.refusalFor(nodeNamed(m, "relu"))->rule, "anchor-needs-elemwise-path");
    EXPECT_EQ(plan.refusalFor(nodeNamed(m, "relu"))->blockingNode, nodeNamed(m, "softmax"));
    EXPECT_EQ(plan.refusalFor(nodeNamed(m, "softmax"))->rule, "opaque");
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, DiamondWithOpaqueBranchIsRefusedNamingIt) {
    // a -> {b: Exp, c: Softmax} -> d: Add -> e: Relu
    ir::GraphBuilder gb("diamond");
    auto x = gb.input("x", DataType::Float, {2, 3});
    auto a = gb.op("Relu", {x}, {}, "a");
    auto bv = gb.op("Exp", {a}, {}, "b");
    auto c = gb.op("Softmax", {a}, {}, "c");
    auto d = gb.op("Add", {bv, c}, {}, "d");
    gb.output(gb.op("Relu", {d}, {}, "e"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(plan.postDominatorOf(nodeNamed(m, "a")), nodeNamed(m, "d"));
    const auto* r = plan.refusalFor(nodeNamed(m, "a"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "path-not-injective");
    EXPECT_EQ(r->wanted, nodeNamed(m, "d"));
    EXPECT_EQ(r->blockingNode, nodeNamed(m, "c"));
    EXPECT_EQ(r->blockingValue, a);
    EXPECT_NE(r->message.find("c"), std::string::npos);
    EXPECT_EQ(memberNames(m, plan, "b"), (std::vector<std::string>{"b", "d", "e"}));
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, ElementwiseIntoAnOpaqueSinkIsRefused) {
    ir::GraphBuilder gb("into_opaque");
    auto x = gb.input("x", DataType::Float, {2, 3});
    gb.output(gb.op("Softmax", {gb.op("Exp", {x}, {}, "exp")}, {}, "softmax"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    const auto* r = plan.refusalFor(nodeNamed(m, "exp"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "sink-not-fusable");
    EXPECT_EQ(r->blockingNode, nodeNamed(m, "softmax"));
    EXPECT_EQ(plan.groups.size(), 2u);
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, DiamondOfElementwiseOpsFusesWhole) {
    ir::GraphBuilder gb("diamond_ok");
    auto x = gb.input("x", DataType::Float, {2, 3});
    auto a = gb.op("Relu", {x}, {}, "a");
    auto d = gb.op("Add", {gb.op("Exp", {a}, {}, "b"), gb.op("Neg", {a}, {}, "c")}, {}, "d");
    gb.output(gb.op("Relu", {d}, {}, "e"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(plan.refusalFor(nodeNamed(m, "a")), nullptr);
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, ReduceIsTerminal) {
    ir::GraphBuilder gb("reduce");
    auto x = gb.input("x", DataType::Float, {2, 8});
    auto e = gb.op("Exp", {x}, {}, "exp");
    auto s = gb.op("ReduceSum", {e, gb.ints("axes", {1})}, {Attribute::makeInt("keepdims", 1)}, "sum");
    gb.output(gb.op("Relu", {s}, {}, "relu"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(memberNames(m, plan, "exp"), (std::vector<std::string>{"exp", "sum"}));
    EXPECT_EQ(plan.groupFor(nodeNamed(m, "sum"))->anchor, nodeNamed(m, "sum"));
    EXPECT_EQ(plan.groupFor(nodeNamed(m, "sum"))->pattern, OpPattern::CommReduce);
    const auto* r = plan.refusalFor(nodeNamed(m, "sum"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "reduce-is-terminal");
    EXPECT_EQ(r->blockingNode, nodeNamed(m, "relu"));
    EXPECT_EQ(memberNames(m, plan, "relu"), (std::vector<std::string>{"relu"}));
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, MaxDepthBoundsGroupSize) {
    auto build = [] {
        ir::GraphBuilder gb("chain6");
        auto v = gb.input("x", DataType::Float, {4});
        for (int i = 1; i <= 6; ++i) v = gb.op("Relu", {v}, {}, "r" + std::to_string(i));
        gb.output(v);
        return gb.finish();
    };
    auto m = build();
    EXPECT_EQ(analysis::computeFusionGroups(m.graph).groups.size(), 1u);
    analysis::FusionOptions opts;
    opts.maxDepth = 3;
    auto plan = analysis::computeFusionGroups(m.graph, opts);
    ASSERT_EQ(plan.groups.size(), 2u);
    EXPECT_EQ(memberNames(m, plan, "r1"), (std::vector<std::string>{"r1", "r2", "r3"}));
    EXPECT_EQ(memberNames(m, plan, "r4"), (std::vector<std::string>{"r4", "r5", "r6"}));
    const auto* r = plan.refusalFor(nodeNamed(m, "r3"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "max-depth");
    EXPECT_EQ(r->wanted, nodeNamed(m, "r4"));
    expectRefusalsConsistent(m.graph, plan);
    opts.maxDepth = 0;
    EXPECT_THROW(analysis::computeFusionGroups(m.graph, opts), Error);
}

TEST(FusionGroups, MultiOutputSplitFusesIntoConcat) {
    ir::GraphBuilder gb("split");
    auto x = gb.input("x", DataType::Float, {2, 8});
    auto parts = gb.opMulti("Split", {x}, 2, {Attribute::makeInt("axis", 1)}, "split");
    auto r0 = gb.op("Relu", {parts[0]}, {}, "r0");
    auto r1 = gb.op("Sigmoid", {parts[1]}, {}, "r1");
    gb.output(gb.op("Concat", {r0, r1}, {Attribute::makeInt("axis", 1)}, "concat"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(plan.groups.size(), 1u);
    EXPECT_EQ(plan.postDominatorOf(nodeNamed(m, "split")), nodeNamed(m, "concat"));
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, MultiOutputWithAGraphOutputHasNoPostDominator) {
    ir::GraphBuilder gb("split_out");
    auto x = gb.input("x", DataType::Float, {2, 8});
    auto parts = gb.opMulti("Split", {x}, 2, {Attribute::makeInt("axis", 1)}, "split");
    gb.output(gb.op("Relu", {parts[0]}, {}, "r0"));
    gb.output(parts[1]);
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    const auto* r = plan.refusalFor(nodeNamed(m, "split"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "no-postdom");
    EXPECT_EQ(r->blockingValue, parts[1]);
    EXPECT_EQ(plan.groups.size(), 2u);
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, TwoAnchorsMeetingInOneAddFuseOnlyTheFirst) {
    ir::GraphBuilder gb("two_convs");
    auto x = gb.input("x", DataType::Float, {1, 3, 8, 8});
    auto sum = gb.op("Add", {conv(gb, x, 3, 4, "c1", 1), conv(gb, x, 3, 4, "c2", 2)}, {}, "add");
    gb.output(gb.op("Relu", {sum}, {}, "relu"));
    auto m = gb.finish();
    auto plan = analysis::computeFusionGroups(m.graph);
    EXPECT_EQ(memberNames(m, plan, "add"), (std::vector<std::string>{"c1", "add", "relu"}));
    const auto* r = plan.refusalFor(nodeNamed(m, "c2"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "one-anchor-per-group");
    EXPECT_EQ(r->blockingNode, nodeNamed(m, "c1"));
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, AnchorWithANonElementwiseReaderIsRefusedNamingIt) {
    const auto* ex = examples::find("blocked_fusion");
    ASSERT_NE(ex, nullptr);
    auto m = ex->build();
    auto plan = analysis::computeFusionGroups(m.graph);
    const auto* r = plan.refusalFor(nodeNamed(m, "conv"));
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->rule, "anchor-needs-elemwise-path");
    EXPECT_EQ(r->blockingNode, nodeNamed(m, "conv_tap.mean"));
    EXPECT_EQ(r->wanted, nodeNamed(m, "gate"));
    expectRefusalsConsistent(m.graph, plan);
}

TEST(FusionGroups, RealModelsArePartitionedIntoConnectedConvexGroups) {
    for (const auto& file : test::realModelNames()) {
        SCOPED_TRACE(file);
        auto m = onnxio::importModelFile(test::realModel(file));
        const auto& g = m.graph;
        auto plan = analysis::computeFusionGroups(g);
        // Partition: every node in exactly one group, groups list each member once.
        size_t total = 0;
        for (const auto& grp : plan.groups) {
            total += grp.members.size();
            for (NodeId n : grp.members) EXPECT_EQ(plan.groupOf(n), grp.id);
            EXPECT_NE(std::find(grp.members.begin(), grp.members.end(), grp.anchor), grp.members.end());
        }
        EXPECT_EQ(total, g.nodeCount());
        // Every member reaches the group's last member through members only, and no path leaves
        // a group and comes back (so collapsing groups keeps the graph acyclic).
        auto readers = [&](NodeId n) {
            std::vector<NodeId> out;
            for (ValueId v : g.node(n).outputs)
                if (v != ir::kNone)
                    for (NodeId c : g.value(v).consumers) out.push_back(c);
            return out;
        };
        for (const auto& grp : plan.groups) {
            std::set<NodeId> reach{grp.members.back()};
            for (auto it = grp.members.rbegin(); it != grp.members.rend(); ++it)
                for (NodeId c : readers(*it))
                    if (plan.groupOf(c) == grp.id && reach.count(c)) reach.insert(*it);
            EXPECT_EQ(reach.size(), grp.members.size()) << "group " << grp.id;
        }
        std::vector<std::set<int>> succ(plan.groups.size());
        for (NodeId n : g.nodeOrder())
            for (NodeId c : readers(n))
                if (plan.groupOf(c) != plan.groupOf(n)) succ[plan.groupOf(n)].insert(plan.groupOf(c));
        std::vector<int> indeg(plan.groups.size(), 0), ready;
        for (const auto& s : succ)
            for (int t : s) ++indeg[t];
        for (size_t i = 0; i < indeg.size(); ++i)
            if (!indeg[i]) ready.push_back(static_cast<int>(i));
        size_t seen = 0;
        while (!ready.empty()) {
            int v = ready.back();
            ready.pop_back();
            ++seen;
            for (int t : succ[v])
                if (--indeg[t] == 0) ready.push_back(t);
        }
        EXPECT_EQ(seen, plan.groups.size()) << "collapsed group graph has a cycle";
        expectRefusalsConsistent(g, plan);
        EXPECT_LE(plan.kernelCount(g), plan.groups.size());
    }
}
