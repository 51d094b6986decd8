// eval::checkOutputs and eval::StepVerifier (shared by `optimize --verify` and the stepper).
#include <gtest/gtest.h>

#include <atomic>

#include "eval/Verify.h"
#include "examples/Builder.h"
#include "ir/Error.h"

namespace passlens {
namespace {

using namespace passlens::ir;
using S = eval::OutputCheck::Status;

/// y = x * k, z = x + 1 (two outputs).
Model twoOutputs(float k) {
    GraphBuilder b("two");
    auto x = b.input("x", DataType::Float, {4});
    b.output(b.op("Mul", {x, b.scalar("k", k)}, {}, "mul"));
    b.output(b.op("Add", {x, b.scalar("one", 1.f)}, {}, "add"));
    return b.finish();
}

TEST(Verify, CheckOutputsNamesTheFirstDifferingOutput) {
    Model m = twoOutputs(2);
    auto a = floatTensor({4}, {1, 2, 3, 4}), b = floatTensor({4}, {1, 2, 3, 4.5f});
    auto same = eval::checkOutputs(m, {a, a}, {a, a});
    EXPECT_EQ(same.status, S::Match);
    EXPECT_EQ(same.maxAbs, 0);
    auto second = eval::checkOutputs(m, {a, b}, {a, a});
    EXPECT_EQ(second.status, S::Differ);
    EXPECT_EQ(second.output, m.graph.value(m.graph.outputs()[1]).name);
    EXPECT_DOUBLE_EQ(second.maxAbs, 0.5);
    // Within tolerance is a match; a shape change is a difference with its reason.
    auto close = floatTensor({4}, {1, 2, 3, 4 + 1e-6f});
    EXPECT_EQ(eval::checkOutputs(m, {a, close}, {a, a}).status, S::Match);
    auto shorter = eval::checkOutputs(m, {a, floatTensor({3}, {1, 2, 3})}, {a, a});
    EXPECT_EQ(shorter.status, S::Differ);
    EXPECT_EQ(shorter.reason, "shape or type differs");
}

TEST(Verify, StepVerifierBlamesOnlyTheStepThatChangedTheOutputs) {
    Model input = twoOutputs(2);
    eval::StepVerifier v(input);
    ASSERT_EQ(v.inputCheck().status, S::Match);
    EXPECT_TRUE(v.pinnedToOne().empty());
    auto same = v.check(input);
    EXPECT_EQ(same.vsPrevious.status, S::Match);
    EXPECT_EQ(same.vsInput.status, S::Match);
    auto broken = v.check(twoOutputs(3));
    EXPECT_EQ(broken.vsPrevious.status, S::Differ);
    EXPECT_EQ(broken.vsInput.status, S::Differ);
    auto after = v.check(twoOutputs(3));  // a later step that keeps the broken outputs
    EXPECT_EQ(after.vsPrevious.status, S::Match);
    EXPECT_EQ(after.vsInput.status, S::Differ);
}

TEST(Verify, UnsupportedOpIsNotRunWithTheReason) {
    Model m = twoOutputs(2);
    m.graph.node(*m.graph.findNode("mul")).domain = "com.example";
    m.opsetImports.push_back({"com.example", 1});
    eval::StepVerifier v(m);
    EXPECT_EQ(v.inputCheck().status, S::NotRun);
    EXPECT_NE(v.inputCheck().reason.find("com.example"), std::string::npos) << v.inputCheck().reason;
    EXPECT_EQ(v.check(twoOutputs(2)).vsPrevious.status, S::NotRun);
    // A supported input model with an unsupported step: that step is not run, the next is
    // compared with the last model that ran.
    eval::StepVerifier ok(twoOutputs(2));
    EXPECT_EQ(ok.check(m).vsPrevious.status, S::NotRun);
    EXPECT_EQ(ok.check(twoOutputs(2)).vsPrevious.status, S::Match);
}

TEST(Verify, CancelInsideAStepRunThrowsCancelled) {
    std::atomic<bool> cancel{false};
    eval::StepVerifier v(twoOutputs(2), {}, &cancel);
    ASSERT_EQ(v.inputCheck().status, S::Match);
    cancel = true;
    try {
        v.check(twoOutputs(2));
        FAIL() << "a cancelled step run returned";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Cancelled);
    }
}

TEST(Verify, SymbolicDimsRunAsOneUnlessPinned) {
    GraphBuilder b("sym");
    auto x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("N"), Dim::of(4)});
    b.output(b.op("Relu", {x}, {}, "relu"));
    Model m = b.finish();
    EXPECT_EQ(eval::StepVerifier(m).pinnedToOne(), std::vector<std::string>{"N"});
    EXPECT_TRUE(eval::StepVerifier(m, {{"N", 3}}).pinnedToOne().empty());
    EXPECT_EQ(eval::StepVerifier(m, {{"N", 3}}).inputCheck().status, S::Match);
}

}  // namespace
}  // namespace passlens
