// HardSigmoid / HardSwish fusion: the clip forms with Clip bounds as attributes (opset 9) and as
// inputs (opset ≥ 11), x·HardSigmoid(x), the opset gate, and the traps (a second reader, wrong
// constants), with op counts, remark text and numerical equivalence.
#include <gtest/gtest.h>

#include <map>

#include "PassTestSupport.h"
#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "onnx/Checker.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

PassResult runAndCompare(Model& m) {
    auto options = test::fusionCheckOptions(9);
    // Spread the inputs over [-6, 6) so every piece of the clip is exercised.
    options.adjustInputs = [](std::vector<TensorPtr> inputs) {
        std::vector<TensorPtr> wide;
        for (const auto& t : inputs) {
            std::vector<float> v(t->as<float>(), t->as<float>() + t->elementCount());
            for (auto& f : v) f *= 6.f;
            wide.push_back(makeTensorOf(DataType::Float, t->dims, v, t->name));
        }
        return wide;
    };
    return test::runChecked(m, "fuse-hard-swish", options).result;
}

enum class Form { MulThenDiv, DivThenMul, HardSigmoidOnly, MulHardSigmoid, MulThenScale };

Model hardSwish(Form form, int64_t opset, float three = 3.f, bool tap = false) {
    GraphBuilder b("hard_swish", opset);
    auto x = b.input("x", DataType::Float, {2, 16});
    ValueId h;
    if (form == Form::MulHardSigmoid) {
        h = b.op("HardSigmoid", {x}, {Attribute::makeFloat("alpha", 1.f / 6.f), Attribute::makeFloat("beta", 0.5f)}, "hsig");
    } else {
        auto a = b.op("Add", {x, b.scalar("three", three)}, {}, "add3");
        h = opset < 11 ? b.op("Clip", {a}, {Attribute::makeFloat("min", 0.f), Attribute::makeFloat("max", 6.f)}, "clip")
                       : b.op("Clip", {a, b.scalar("lo", 0.f), b.scalar("hi", 6.f)}, {}, "clip");
    }
    ValueId y = kNone;
    switch (form) {
    case Form::MulThenDiv: y = b.op("Div", {b.op("Mul", {x, h}, {}, "mul"), b.scalar("six", 6.f)}, {}, "div6"); break;
    case Form::DivThenMul: y = b.op("Mul", {b.op("Div", {h, b.scalar("six", 6.f)}, {}, "div6"), x}, {}, "mul"); break;
    case Form::HardSigmoidOnly: y = b.op("Mul", {h, b.scalar("sixth", 1.f / 6.f)}, {}, "div6"); break;
    case Form::MulHardSigmoid: y = b.op("Mul", {x, h}, {}, "mul"); break;
    // The algebraic pass turns /6 followed by a learned scale w into one Mul by w/6.
    case Form::MulThenScale: y = b.op("Mul", {b.scalar("w_sixth", 0.05f), b.op("Mul", {x, h}, {}, "mul")}, {}, "scale"); break;
    }
    b.output(b.op("Relu", {y}, {}, "relu"));
    if (tap) b.output(b.op("Neg", {h}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(FusionHardSwish, ClipFormsBecomeHardSwishAtOpset14) {
    for (Form f : {Form::MulThenDiv, Form::DivThenMul, Form::MulHardSigmoid}) {
        Model m = hardSwish(f, 14);
        PassResult r = runAndCompare(m);
        EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"HardSwish", 1}, {"Relu", 1}})) << int(f);
        EXPECT_NE(remarkText(r, RemarkKind::Applied).find("fused into HardSwish"), std::string::npos);
        EXPECT_FALSE(m.graph.findValue("six").has_value());
        PassManager again;
        again.addPass("fuse-hard-swish");
        EXPECT_FALSE(again.run(m).steps.back().result.changed);
    }
}

TEST(FusionHardSwish, Opset9ClipAttributesBecomeHardSigmoidAndTheGateIsNamed) {
    Model m = hardSwish(Form::DivThenMul, 9);
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"HardSigmoid", 1}, {"Mul", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("x·HardSigmoid(x) at mul not fused: HardSwish needs opset 14, the model has opset 9"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
    Model m2 = hardSwish(Form::MulThenDiv, 13);
    PassResult r2 = runAndCompare(m2);
    EXPECT_EQ(opCounts(m2.graph), (std::map<std::string, int>{{"HardSigmoid", 1}, {"Mul", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r2, RemarkKind::Applied).find("x·clip(x+3, 0, 6)/6 at clip: 4 nodes became x·HardSigmoid(x)"), std::string::npos)
        << remarkText(r2, RemarkKind::Applied);
    EXPECT_NE(remarkText(r2, RemarkKind::Missed).find("x·HardSigmoid(x) at mul not fused: HardSwish needs opset 14, the model has opset 13"),
              std::string::npos)
        << remarkText(r2, RemarkKind::Missed);
}

TEST(FusionHardSwish, HardSigmoidFormAlone) {
    Model m = hardSwish(Form::HardSigmoidOnly, 13);
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"HardSigmoid", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("clip(x+3, 0, 6) at clip: 3 nodes fused into HardSigmoid(alpha 1/6, beta 0.5)"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied);
}

TEST(FusionHardSwish, WrongConstantIsNotAHardSwish) {
    Model m = hardSwish(Form::MulThenDiv, 14, 2.f);
    PassResult r = runAndCompare(m);
    EXPECT_EQ(m.graph.nodeCount(), 5u);
    EXPECT_FALSE(r.changed);
}

TEST(FusionHardSwish, SecondReaderIsRefusedAndNamed) {
    Model m = hardSwish(Form::MulHardSigmoid, 14, 3.f, true);
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph)["HardSwish"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("x·HardSigmoid(x) at mul not fused: 'hsig_out' has 2 readers (mul, tap)"),
              std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionHardSwish, ValueCapturedByASubgraphIsASecondReader) {
    // An If branch reads the HardSigmoid output by name (outer-scope capture, not a consumer slot).
    GraphBuilder b("captured", 14);
    auto x = b.input("x", DataType::Float, {2, 16});
    auto cond = b.input("cond", DataType::Bool, {});
    auto h = b.op("HardSigmoid", {x}, {Attribute::makeFloat("alpha", 1.f / 6.f), Attribute::makeFloat("beta", 0.5f)}, "hsig");
    b.output(b.op("Mul", {x, h}, {}, "mul"));
    auto branch = [&](const std::string& op) {
        auto g = std::make_shared<Graph>();
        g->name = op;
        ValueId outer = g->addOuterScopeValue("hsig_out");
        ValueId out = g->addValue(op + "_out", TypeInfo::tensor(DataType::Float));
        g->addNode(op, {outer}, {out});
        g->markOutput(out);
        return g;
    };
    b.output(b.op("If", {cond}, {Attribute::makeGraph("then_branch", branch("Neg")), Attribute::makeGraph("else_branch", branch("Abs"))}, "if"));
    Model m = b.finish();
    PassManager pm;
    pm.addPass("fuse-hard-swish");
    PassResult r = pm.run(m).steps.back().result;
    EXPECT_EQ(opCounts(m.graph)["HardSwish"], 0);
    EXPECT_NE(remarkText(r, RemarkKind::Missed).find("'hsig_out' has 2 readers (mul, a subgraph of if)"), std::string::npos)
        << remarkText(r, RemarkKind::Missed);
}

TEST(FusionHardSwish, SixMergedIntoAFollowingScaleIsTakenBack) {
    Model m = hardSwish(Form::MulThenScale, 14);
    PassResult r = runAndCompare(m);
    EXPECT_EQ(opCounts(m.graph), (std::map<std::string, int>{{"HardSwish", 1}, {"Mul", 1}, {"Relu", 1}}));
    EXPECT_NE(remarkText(r, RemarkKind::Applied).find("x·clip(x+3, 0, 6)/6 at clip: 3 nodes fused into HardSwish; scale keeps the remaining scale"),
              std::string::npos)
        << remarkText(r, RemarkKind::Applied);
    auto k = m.graph.findValue("w_sixth_hardswish");
    ASSERT_TRUE(k.has_value());
    EXPECT_NEAR(m.graph.value(*k).initializer->as<float>()[0], 0.3f, 1e-6f);
    EXPECT_FALSE(m.graph.findValue("w_sixth").has_value());
    Model old = hardSwish(Form::MulThenScale, 9);
    runAndCompare(old);
    EXPECT_EQ(opCounts(old.graph), (std::map<std::string, int>{{"HardSigmoid", 1}, {"Mul", 2}, {"Relu", 1}}));
}
