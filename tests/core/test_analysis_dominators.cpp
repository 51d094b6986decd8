#include <gtest/gtest.h>

#include <random>

#include "DiamondGraph.h"
#include "analysis/Dominators.h"
#include "examples/Builder.h"
#include "onnx/Export.h"
#include "TestSupport.h"

#include <nlohmann/json.hpp>

using namespace passlens;
using analysis::DominatorTree;

namespace {

ir::NodeId producerOf(ir::Model& m, ir::ValueId v) { return m.graph.value(v).producer; }

using test::Diamond;

}  // namespace

TEST(AnalysisDominators, DiamondDominatorTree) {
    Diamond g;
    auto t = DominatorTree::build(g.m.graph);
    EXPECT_EQ(t.idom(g.a), ir::kNone);
    EXPECT_EQ(t.idom(g.b), g.a);
    EXPECT_EQ(t.idom(g.c), g.a);
    EXPECT_EQ(t.idom(g.d), g.a);  // neither branch dominates the join
    EXPECT_EQ(t.idom(g.e), g.d);
    EXPECT_TRUE(t.dominates(g.a, g.e));
    EXPECT_FALSE(t.dominates(g.b, g.d));
    EXPECT_EQ(t.lca(g.b, g.c), g.a);
}

TEST(AnalysisDominators, DiamondPostDominatorTree) {
    Diamond g;
    auto t = DominatorTree::build(g.m.graph, true);
    EXPECT_EQ(t.idom(g.e), ir::kNone);
    EXPECT_EQ(t.idom(g.d), g.e);
    EXPECT_EQ(t.idom(g.b), g.d);
    EXPECT_EQ(t.idom(g.c), g.d);
    EXPECT_EQ(t.idom(g.a), g.d);  // the join post-dominates the fork
    EXPECT_EQ(t.lca(g.b, g.c), g.d);
}

TEST(AnalysisDominators, MultipleOutputsUseVirtualExit) {
    ir::GraphBuilder gb("two_outputs");
    auto x = gb.input("x", ir::DataType::Float, {4});
    auto y = gb.input("y", ir::DataType::Float, {4});
    auto s = gb.op("Add", {x, y}, {}, "s");
    auto o1 = gb.op("Relu", {s}, {}, "o1");
    auto o2 = gb.op("Exp", {s}, {}, "o2");
    gb.output(o1);
    gb.output(o2);
    auto m = gb.finish();
    auto ns = producerOf(m, s), n1 = producerOf(m, o1), n2 = producerOf(m, o2);
    auto post = DominatorTree::build(m.graph, true);
    EXPECT_EQ(post.idom(ns), ir::kNone);  // two sinks: only the virtual exit post-dominates s
    EXPECT_EQ(post.idom(n1), ir::kNone);
    auto dom = DominatorTree::build(m.graph);
    EXPECT_EQ(dom.idom(n1), ns);
    EXPECT_EQ(dom.idom(n2), ns);
    EXPECT_EQ(dom.lca(n1, n2), ns);
}

TEST(AnalysisDominators, NestedDiamonds) {
    // a -> {b, c}; b -> {d, e} -> f; {f, c} -> g
    ir::GraphBuilder gb("nested");
    auto x = gb.input("x", ir::DataType::Float, {4});
    auto a = gb.op("Relu", {x}, {}, "a");
    auto b = gb.op("Exp", {a}, {}, "b");
    auto c = gb.op("Neg", {a}, {}, "c");
    auto d = gb.op("Abs", {b}, {}, "d");
    auto e = gb.op("Sqrt", {b}, {}, "e");
    auto f = gb.op("Add", {d, e}, {}, "f");
    auto h = gb.op("Mul", {f, c}, {}, "g");
    gb.output(h);
    auto m = gb.finish();
    auto dom = DominatorTree::build(m.graph);
    auto post = DominatorTree::build(m.graph, true);
    EXPECT_EQ(dom.idom(producerOf(m, f)), producerOf(m, b));
    EXPECT_EQ(dom.idom(producerOf(m, h)), producerOf(m, a));
    EXPECT_EQ(post.idom(producerOf(m, b)), producerOf(m, f));
    EXPECT_EQ(post.idom(producerOf(m, a)), producerOf(m, h));
    EXPECT_EQ(post.idom(producerOf(m, c)), producerOf(m, h));
}

namespace {
// a dominates b iff b is unreachable from the root once a is removed.
bool bruteDominates(const std::vector<std::vector<uint32_t>>& preds, uint32_t a, uint32_t b) {
    if (a == b) return true;
    size_t n = preds.size();
    std::vector<std::vector<uint32_t>> succ(n);
    for (uint32_t v = 0; v < n; ++v)
        for (uint32_t p : preds[v]) succ[p].push_back(v);
    std::vector<bool> seen(n, false);
    std::vector<uint32_t> stack;
    if (a != 0) { stack.push_back(0); seen[0] = true; }
    while (!stack.empty()) {
        uint32_t v = stack.back();
        stack.pop_back();
        for (uint32_t s : succ[v])
            if (s != a && !seen[s]) { seen[s] = true; stack.push_back(s); }
    }
    return !seen[b];
}
}  // namespace

TEST(AnalysisDominators, MatchesBruteForceOnRandomDags) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        uint32_t n = 2 + rng() % 14;
        std::vector<std::vector<uint32_t>> preds(n);
        for (uint32_t v = 1; v < n; ++v) {
            uint32_t k = 1 + rng() % 3;
            for (uint32_t i = 0; i < k; ++i) preds[v].push_back(rng() % v);  // all reachable
        }
        auto idom = analysis::computeImmediateDominators(preds);
        for (uint32_t v = 1; v < n; ++v) {
            // idom[v] strictly dominates v, and every strict dominator of v dominates idom[v].
            ASSERT_NE(idom[v], v);
            ASSERT_TRUE(bruteDominates(preds, idom[v], v)) << "trial " << trial << " v " << v;
            for (uint32_t a = 0; a < n; ++a) {
                if (a != v && bruteDominates(preds, a, v)) {
                    ASSERT_TRUE(bruteDominates(preds, a, idom[v])) << "trial " << trial;
                }
            }
        }
    }
}

TEST(AnalysisDominators, DomtreeCliPrintsPostDominatorsAndRejectsBadFormat) {
    Diamond g;
    auto path = passlens::test::tempDir("domtree_cli") + "/diamond.onnx";
    onnxio::exportModelFile(g.m, path);
    auto r = passlens::test::runCli({"domtree", path, "--post", "--format", "json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["kind"], "post-dominator");
    bool sawFork = false;
    for (const auto& n : j["nodes"])
        if (n["name"] == "a") {
            sawFork = true;
            EXPECT_EQ(n["idom_name"], "d");
        }
    EXPECT_TRUE(sawFork);
    auto bad = passlens::test::runCli({"domtree", path, "--format", "yaml"});
    EXPECT_EQ(bad.exitCode, 2);
}
