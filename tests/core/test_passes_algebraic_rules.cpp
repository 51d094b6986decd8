// Algebraic rules beyond neutral elements: div-to-mul and Transpose∘Transpose composition,
// positive and negative, with op counts, remark text and numerical equivalence.
#include <gtest/gtest.h>

#include <limits>
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
    if (auto problem = onnxio::checkModel(m)) ADD_FAILURE() << *problem;
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

namespace {

TensorPtr int64Scalar(int64_t v) { return makeTensorOf<int64_t>(DataType::Int64, {}, {v}); }

int64_t int64ConstantOf(const Graph& g, ValueId v) {
    const auto& t = g.value(v).initializer;
    return t && t->elementCount() == 1 ? t->as<int64_t>()[0] : std::numeric_limits<int64_t>::min();
}

/// GPT-style positions and causal mask from the run-time length: rows = embedding[arange(seq)],
/// mask = ~tril(ones(seq, seq)). `start`/`step` of the Range and the Trilu's `upper` vary.
Model positionsAndMask(int64_t start, int64_t step, bool rangeStartIsInput, int64_t upper) {
    GraphBuilder b("positions");
    auto x = b.input("x", DataType::Float, {1, 6, 6});
    auto emb = b.constant("emb", floatTensor({16, 6}, std::vector<float>(96, 0.5f)));
    auto seq = b.op("Gather", {b.op("Shape", {x}, {}, "shape"), b.constant("one", int64Scalar(1))}, {}, "seq");
    auto first = rangeStartIsInput ? b.input("start", DataType::Int64, {}) : b.constant("start", int64Scalar(start));
    auto pos = b.op("Range", {first, seq, b.constant("step", int64Scalar(step))}, {}, "range");
    auto rows = b.op("Gather", {emb, pos}, {Attribute::makeInt("axis", 0)}, "positions");
    auto seq1 = b.op("Unsqueeze", {seq, b.constant("axes", makeTensorOf<int64_t>(DataType::Int64, {1}, {0}))}, {}, "seq1");
    auto size = b.op("Concat", {seq1, seq1}, {Attribute::makeInt("axis", 0)}, "size");
    const uint8_t yes = 1;
    auto ones = b.op("ConstantOfShape", {size}, {Attribute::makeTensor("value", makeTensor(DataType::Bool, {1}, &yes, 1))}, "ones");
    auto tri = b.op("Trilu", {ones}, {Attribute::makeInt("upper", upper)}, "tril");
    auto mask = b.op("Not", {tri}, {}, "not");
    auto scores = b.op("MatMul", {x, b.op("Transpose", {x}, {Attribute::makeInts("perm", {0, 2, 1})}, "t")}, {}, "scores");
    b.output(b.op("Where", {mask, b.constant("neg", floatTensor({1}, {-1e4f})), scores}, {}, "masked"));
    b.output(b.op("Add", {x, rows}, {}, "with_positions"));
    return b.finish();
}

}  // namespace

TEST(AlgebraicRules, GatherOfARangeBelowADimSizeBecomesASlice) {
    {
        Model m = positionsAndMask(0, 1, false, 0);
        const PassResult r = runAlgebraic(m);
        const auto c = opCounts(m.graph);
        EXPECT_EQ(c.count("Range"), 0u);
        EXPECT_EQ(c.at("Slice"), 1);
        // The exporter's Unsqueeze of seq is reused as the Slice end; with the Range gone its
        // Gather has no other reader, and the pair becomes one Shape(x, 1, 2).
        EXPECT_EQ(c.count("Gather"), 0u);
        EXPECT_EQ(c.count("Unsqueeze"), 0u);
        EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "gather-range-slice", "became a Slice"));
        EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "dim-as-shape-slice", "Shape(start=1, end=2)"));
    }
}

TEST(AlgebraicRules, GatherOfARangeWithAnUnknownStartStaysAndSaysWhy) {
    Model m = positionsAndMask(0, 1, true, 0);
    PassManager pm;
    pm.addPass("algebraic");
    const PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph).at("Range"), 1);
    EXPECT_TRUE(hasRemark(r, RemarkKind::Missed, "gather-range-slice", "start and step must be constants"));
}

TEST(AlgebraicRules, NotOfATriangleOfOnesIsTheOtherTriangle) {
    for (int64_t upper : {0, 1}) {
        SCOPED_TRACE(upper);
        Model m = positionsAndMask(0, 1, false, upper);
        const PassResult r = runAlgebraic(m);  // outputs equal, including the masked scores
        const auto c = opCounts(m.graph);
        EXPECT_EQ(c.count("Not"), 0u);
        ASSERT_EQ(c.at("Trilu"), 1);
        for (NodeId n : m.graph.nodeOrder()) {
            const Node& node = m.graph.node(n);
            if (node.opType != "Trilu") continue;
            EXPECT_EQ(node.attrInt("upper", 1), upper ? 0 : 1);
            EXPECT_EQ(int64ConstantOf(m.graph, node.inputs[1]), upper ? -1 : 1);
        }
        EXPECT_TRUE(hasRemark(r, RemarkKind::Applied, "not-triangle", "became one Trilu"));
    }
}
