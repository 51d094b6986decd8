// Algebraic rules beyond neutral elements: div-to-mul and Transpose∘Transpose composition,
// positive and negative, with op counts, remark text and numerical equivalence.
#include <gtest/gtest.h>

#include <map>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

std::map<std::string, int> opCounts(const Graph& g) {
    std::map<std::string, int> c;
    for (NodeId n : g.nodeOrder()) ++c[g.node(n).opType];
    return c;
}

PassResult runAlgebraic(Model& m) {
    Model original = m;
    auto inputs = eval::randomInputs(m, 3);
    auto before = eval::run(m, inputs);
    PassManager pm;
    pm.addPass("algebraic");
    PassResult r = pm.run(m).steps.back().result;
    auto after = eval::run(m, inputs);
    for (const auto& d : eval::compareOutputs(original, after, before, 1e-5, 1e-6)) EXPECT_TRUE(d.ok) << d.name;
    EXPECT_FALSE(onnxio::checkModel(m).has_value());
    return r;
}

bool hasRemark(const PassResult& r, RemarkKind kind, const std::string& rule, const std::string& text) {
    for (const auto& m : r.remarks)
        if (m.kind == kind && m.rule == rule && m.message.find(text) != std::string::npos) return true;
    return false;
}

Model transposes(std::vector<int64_t> p1, std::vector<int64_t> p2, bool secondReader) {
    GraphBuilder b("transposes");
    auto x = b.input("x", DataType::Float, {2, 3, 4});
    auto t1 = b.op("Transpose", {x}, {Attribute::makeInts("perm", p1)}, "t1");
    auto t2 = b.op("Transpose", {t1}, {Attribute::makeInts("perm", p2)}, "t2");
    b.output(b.op("Relu", {t2}, {}, "relu"));
    if (secondReader) b.output(b.op("Sigmoid", {t1}, {}, "other"));
    return b.finish();
}

}  // namespace

TEST(AlgebraicRules, DivByConstantBecomesMulByReciprocal) {
    GraphBuilder b("div");
    auto x = b.input("x", DataType::Float, {2, 3});
    b.output(b.op("Relu", {b.op("Div", {x, b.constant("c", floatTensor({3}, {2.f, 4.f, 8.f}))}, {}, "div")}, {}, "relu"));
    Model m = b.finish();
    NodeId div = *m.graph.findNode("div");
    PassResult r = runAlgebraic(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Mul", 1}, {"Relu", 1}}));
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "div-to-mul", "div: x / c rewritten as x * (1/c)"));
    bool provenance = false;
    for (const auto& c : r.changes) provenance |= c.kind == ChangeKind::Replaced && c.provenance == std::vector<NodeId>{div};
    EXPECT_TRUE(provenance);
}

TEST(AlgebraicRules, DivByZeroElementIsKept) {
    GraphBuilder b("div_zero");
    auto x = b.input("x", DataType::Float, {3});
    b.output(b.op("Div", {x, b.constant("c", floatTensor({3}, {2.f, 0.f, 8.f}))}, {}, "div"));
    Model m = b.finish();
    PassManager pm;
    pm.addPass("algebraic");
    PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph)["Div"], 1);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "div-to-mul", "divisor 'c' has a zero, huge or subnormal element"));
}

TEST(AlgebraicRules, TransposeChainComposesIntoOne) {
    Model m = transposes({1, 0, 2}, {0, 2, 1}, false);
    PassResult r = runAlgebraic(m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 1);
    const Node& t = m.graph.node(*m.graph.findNode("t2"));
    EXPECT_EQ(t.attrInts("perm"), (std::vector<int64_t>{1, 2, 0}));
    EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "compose-transposes", "t1 and t2 composed into one Transpose"));
}

TEST(AlgebraicRules, InverseTransposesVanish) {
    Model m = transposes({0, 2, 1}, {0, 2, 1}, false);
    runAlgebraic(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"Relu", 1}}));
}

TEST(AlgebraicRules, TransposeWithSecondReaderIsNotComposed) {
    Model m = transposes({1, 0, 2}, {0, 2, 1}, true);
    PassResult r = runAlgebraic(m);
    EXPECT_EQ(opCounts(m.graph)["Transpose"], 2);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "compose-transposes", "not composed: t1's result has other readers"));
}
