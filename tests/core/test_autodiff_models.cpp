// Training graphs end to end: the lecture's f, an MLP with mse, a small CNN with cross-entropy and
// the transformer block example, every parameter gradient against finite differences; provenance,
// the autodiff pass in a pipeline, and bad input through the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "AutodiffTestSupport.h"
#include "TestSupport.h"
#include "autodiff/Autodiff.h"
#include "autodiff/AutodiffPass.h"
#include "eval/Interpreter.h"
#include "examples/Examples.h"
#include "examples/TrainingExamples.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using passlens::test::expectGradientsMatch;
using passlens::test::GradCheck;

namespace {

// The CNN lives in the examples (the training-memory tests plan it too).
Model smallCnn() { return examples::cnnForward(); }

std::vector<std::string> floatInitializers(const Model& m) {
    std::vector<std::string> out;
    for (ValueId v : m.graph.initializerOrder())
        if (m.graph.value(v).initializer->dtype == DataType::Float) out.push_back(m.graph.value(v).name);
    return out;
}

std::vector<float> floatsOf(const TensorPtr& t) { return {t->as<float>(), t->as<float>() + t->elementCount()}; }

}  // namespace

TEST(AutodiffModels, LectureFunctionAdjointsAtTwoFive) {
    Model train = autodiff::makeTrainingModel(examples::lectureFunction(), {"none", "", {"x1", "x2"}});
    auto outs = eval::run(train, {floatTensor({1}, {2.f}), floatTensor({1}, {5.f})});
    ASSERT_EQ(outs.size(), 4u);  // f, loss, x1_grad, x2_grad
    EXPECT_NEAR(floatsOf(outs[0])[0], std::log(2.0) + 10 - std::sin(5.0), 1e-5);
    EXPECT_NEAR(floatsOf(outs[2])[0], 5.5, 1e-5);
    EXPECT_NEAR(floatsOf(outs[3])[0], 2 - std::cos(5.0), 1e-5);  // ≈ 1.7163
    EXPECT_EQ(train.graph.value(train.graph.outputs()[2]).name, "x1_grad");
    EXPECT_EQ(train.graph.value(train.graph.outputs()[3]).name, "x2_grad");
    EXPECT_FALSE(onnxio::checkModel(train).has_value());
}

TEST(AutodiffModels, MlpWithMseEveryParameterMatchesFiniteDifferences) {
    Model mlp = examples::mlpForward();
    GradCheck c;
    c.inputs = {{"x", randomFloats({4, 8}, 400)}, {"y_target", randomFloats({4, 3}, 401, 0.f, 1.f)}};
    auto wrt = floatInitializers(mlp);
    ASSERT_EQ(wrt.size(), 6u);
    auto report = expectGradientsMatch(mlp, "mse", wrt, c);
    EXPECT_GT(report.checked, 300u);
    RecordProperty("worst", report.worst);
}

TEST(AutodiffModels, MlpGradientWithRespectToAGraphInput) {
    GradCheck c;
    c.inputs = {{"x", randomFloats({4, 8}, 402)}, {"y_target", randomFloats({4, 3}, 403, 0.f, 1.f)}};
    expectGradientsMatch(examples::mlpForward(), "mse", {"x", "fc2.weight"}, c);
}

TEST(AutodiffModels, CnnWithCrossEntropyEveryParameterMatchesFiniteDifferences) {
    Model cnn = smallCnn();
    GradCheck c;
    c.inputs = {{"image", randomFloats({2, 1, 8, 8}, 410)}, {"logits_labels", int64Tensor({2}, {3, 1})}};
    auto wrt = floatInitializers(cnn);
    ASSERT_EQ(wrt.size(), 6u);
    auto report = expectGradientsMatch(cnn, "cross-entropy", wrt, c);
    EXPECT_GT(report.checked, 100u);
}

TEST(AutodiffModels, TransformerBlockExampleEveryParameter) {
    // Decomposed LayerNorm (Pow, Sqrt, Div), attention (MatMul, Softmax, Reshape, Transpose), erf GELU.
    Model m = examples::find("transformer_block")->build();
    GradCheck c;
    c.maxElementsPerTensor = 12;
    auto outName = m.graph.value(m.graph.outputs()[0]).name;
    c.inputs = {{"tokens", randomFloats({1, 8, 16}, 420)}, {outName + "_target", randomFloats({1, 8, 16}, 421)}};
    // Every learned tensor (the scalar constants — Pow's exponent 2 of negative bases, ε — are not).
    std::vector<std::string> wrt;
    for (const auto& n : floatInitializers(m))
        if (n.find("weight") != std::string::npos || n.find("gamma") != std::string::npos || n.find("beta") != std::string::npos ||
            n.find("bias") != std::string::npos)
            wrt.push_back(n);
    EXPECT_EQ(wrt.size(), 11u);
    auto report = expectGradientsMatch(m, "mse", wrt, c);
    EXPECT_GT(report.checked, 100u);
}

TEST(AutodiffModels, ProvenanceNamesTheForwardNodeAndOnlyForwardTensorsAreSaved) {
    Model forward = examples::mlpForward();
    std::set<std::string> forwardNames, forwardValues;
    for (NodeId n : forward.graph.nodeOrder()) forwardNames.insert(forward.graph.node(n).displayName());
    for (ValueId v : forward.graph.valueIds()) forwardValues.insert(forward.graph.value(v).name);
    Model train = autodiff::makeTrainingModel(forward, {});
    size_t backward = 0, loss = 0;
    for (NodeId n : train.graph.nodeOrder()) {
        const Node& node = train.graph.node(n);
        auto p = autodiff::provenanceOf(node);
        if (p.role == autodiff::Role::Loss) ++loss;
        if (p.role != autodiff::Role::Backward) continue;
        ++backward;
        EXPECT_FALSE(p.forwardNode.empty()) << node.displayName();
        bool knownForward = forwardNames.count(p.forwardNode) || p.forwardNode.rfind("loss/", 0) == 0 || forwardValues.count(p.forwardNode);
        EXPECT_TRUE(knownForward) << node.displayName() << " of " << p.forwardNode;
        for (const auto& s : p.saved) {
            bool lossValue = s.rfind("loss", 0) == 0 || s == "y_target";
            EXPECT_TRUE(forwardValues.count(s) || lossValue) << node.displayName() << " saves " << s;
        }
        // The stable-id provenance points at the forward node of the same name.
        if (!node.provenance.empty() && forwardNames.count(p.forwardNode)) {
            EXPECT_EQ(forward.graph.node(node.provenance[0]).displayName(), p.forwardNode);
        }
    }
    EXPECT_EQ(loss, 3u);  // Sub, Mul, ReduceMean
    EXPECT_GT(backward, 10u);
    // The doc string carries the same provenance through a file.
    Model reimported = train;
    for (NodeId n : reimported.graph.nodeOrder()) reimported.graph.node(n).metadataProps.clear();
    for (NodeId n : train.graph.nodeOrder())
        EXPECT_EQ(autodiff::provenanceOf(train.graph.node(n)).forwardNode, autodiff::provenanceOf(reimported.graph.node(n)).forwardNode);
}

TEST(AutodiffModels, ReluSavesTheTensorThatStaysAliveAnyway) {
    // relu1 reads fc1's output (read by nothing else) and writes a1 (read by fc2, whose weight
    // gradient saves it): the rule keeps a1, not the Gemm output.
    Model train = autodiff::makeTrainingModel(examples::mlpForward(), {});
    bool found = false;
    for (NodeId n : train.graph.nodeOrder()) {
        auto p = autodiff::provenanceOf(train.graph.node(n));
        if (p.role != autodiff::Role::Backward || p.forwardNode != "relu1" || p.saved.empty()) continue;
        found = true;
        EXPECT_EQ(p.saved, std::vector<std::string>{"relu1_out"});
        EXPECT_NE(p.note.find("rather than 'fc1_out'"), std::string::npos) << p.note;
    }
    EXPECT_TRUE(found);
    // Directly after a graph input the input is kept (it is alive anyway).
    GraphBuilder b("relu_on_input");
    ValueId x = b.input("x", DataType::Float, {3});
    ValueId r = b.op("Relu", {x}, {}, "relu");
    test::addWeightedSumLoss(b, r);
    Model t2 = autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
    for (NodeId n : t2.graph.nodeOrder()) {
        auto p = autodiff::provenanceOf(t2.graph.node(n));
        if (p.forwardNode == "relu" && !p.saved.empty()) {
            EXPECT_EQ(p.saved, std::vector<std::string>{"x"}) << p.note;
        }
    }
}

TEST(AutodiffModels, OnlyNodesOnAPathAreDifferentiatedAndUnreachedTensorsGetZeros) {
    GraphBuilder b("two_branches");
    ValueId a = b.constant("a", randomFloats({3}, 500));
    ValueId unused = b.constant("unused", randomFloats({2, 2}, 501));
    ValueId side = b.op("Exp", {unused}, {}, "side");  // reaches a second output, not the loss
    ValueId y = b.op("Tanh", {a}, {}, "main");
    test::addWeightedSumLoss(b, y);
    b.output(side);
    Model m = b.finish();
    passes::PassOptions po;
    po.params = autodiff::paramsFromOptions({"none", "L", {"a", "unused"}});
    auto result = autodiff::makeAutodiffPass()->run(m, po);
    for (NodeId n : m.graph.nodeOrder()) EXPECT_NE(autodiff::provenanceOf(m.graph.node(n)).forwardNode, "side");
    auto outs = eval::run(m, {});
    const auto& names = m.graph.outputs();
    ASSERT_EQ(names.size(), 5u);  // L, side, loss, a_grad, unused_grad
    EXPECT_EQ(m.graph.value(names[4]).name, "unused_grad");
    for (float v : floatsOf(outs[4])) EXPECT_EQ(v, 0.f);
    bool missed = false;
    for (const auto& r : result.remarks) missed = missed || (r.kind == passes::RemarkKind::Missed && r.message.find("'unused'") != std::string::npos);
    EXPECT_TRUE(missed);
}

TEST(AutodiffModels, PassStepShowsAddedBackwardNodesThenBasicPassesShrinkThem) {
    Model m = examples::mlpForward();
    const size_t forwardNodes = m.graph.nodeCount();
    passes::PassManager pm;
    pm.addPass("autodiff");
    pm.addLevel(passes::Level::Basic);
    passes::PipelineOptions po;
    po.pass.params = autodiff::paramsFromOptions({});
    auto result = pm.run(m, po);
    ASSERT_GE(result.steps.size(), 2u);
    const auto& step = result.steps[0].result;
    EXPECT_EQ(step.name, "autodiff");
    // Nodes (and the loss target input) are added; the one other entry is the new output list.
    size_t added = 0, outputLists = 0;
    for (const auto& c : step.changes) {
        if (c.kind == passes::ChangeKind::Modified && c.nodeNames == std::vector<std::string>{"graph outputs"}) {
            ++outputLists;
            continue;
        }
        EXPECT_EQ(c.kind, passes::ChangeKind::Added);
        if (!c.provenance.empty()) ++added;
    }
    EXPECT_GT(added, 10u);
    EXPECT_EQ(outputLists, 1u);
    const size_t afterAutodiff = step.nodesAfter;
    EXPECT_GT(afterAutodiff, forwardNodes);
    EXPECT_LT(result.steps.back().result.nodesAfter, afterAutodiff);  // cleanup removes backward nodes
    // The cleaned training graph computes the same gradients.
    Model raw = autodiff::makeTrainingModel(examples::mlpForward(), {});
    std::vector<TensorPtr> ins{randomFloats({4, 8}, 600), randomFloats({4, 3}, 601)};
    auto ref = eval::run(raw, ins);
    auto got = eval::run(m, ins);
    ASSERT_EQ(ref.size(), got.size());
    for (size_t k = 0; k < ref.size(); ++k) {
        auto a = floatsOf(ref[k]), b = floatsOf(got[k]);
        ASSERT_EQ(a.size(), b.size());
        for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(a[e], b[e], 1e-5 + 1e-4 * std::fabs(a[e]));
    }
    // The autodiff pass is not part of any level.
    for (auto lvl : {passes::Level::Basic, passes::Level::All})
        for (const auto& n : passes::PassRegistry::global().pipeline(lvl)) EXPECT_NE(n, "autodiff");
}

TEST(AutodiffModels, OpWithoutRuleIsAnErrorNamingIt) {
    GraphBuilder b("no_rule");
    ValueId x = b.constant("x", randomFloats({3}, 700));
    ValueId s = b.op("Softplus", {b.op("Tanh", {x}, {}, "t")}, {}, "soft");
    test::addWeightedSumLoss(b, s);
    try {
        autodiff::makeTrainingModel(b.finish(), {"none", "", {"x"}});
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("no gradient rule for op Softplus (node 'soft'"), std::string::npos) << e.what();
    }
}

TEST(AutodiffModels, CliGradWritesTheContractAndRejectsBadInput) {
    const std::string dir = test::tempDir("grad");
    const std::string mlp = dir + "/mlp.onnx", train = dir + "/train.onnx";
    onnxio::exportModelFile(examples::mlpForward(), mlp);
    auto ok = test::runCli({"grad", mlp, "-o", train, "--loss", "mse", "--wrt", "fc3.bias,fc1.weight"});
    ASSERT_EQ(ok.exitCode, 0) << ok.err;
    EXPECT_NE(ok.out.find("2 gradients of the mse loss"), std::string::npos) << ok.out;
    auto printed = test::runCli({"print", train});
    EXPECT_NE(printed.out.find("return %y, %loss, %fc3.bias_grad, %fc1.weight_grad"), std::string::npos) << printed.out;
    EXPECT_NE(printed.out.find("%y_target"), std::string::npos);

    auto noRule = dir + "/no_rule.onnx";
    GraphBuilder b("no_rule");
    ValueId x = b.input("x", DataType::Float, {3});
    b.output(b.op("Softplus", {b.op("Mul", {x, b.constant("w", randomFloats({3}, 701))}, {}, "scale")}, {}, "soft"));
    onnxio::exportModelFile(b.finish(), noRule);
    auto bad = test::runCli({"grad", noRule, "-o", dir + "/x.onnx"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("no gradient rule for op Softplus"), std::string::npos) << bad.err;

    for (const auto& args : std::vector<std::vector<std::string>>{
             {"grad", mlp, "-o", dir + "/x.onnx", "--loss", "hinge"},
             {"grad", mlp, "-o", dir + "/x.onnx", "--output", "nope"},
             {"grad", mlp, "-o", dir + "/x.onnx", "--wrt", "fc9.weight"},
             {"grad", mlp, "-o", dir + "/x.onnx", "--loss", "none"},
             {"grad", dir + "/missing.onnx", "-o", dir + "/x.onnx"},
             {"grad", mlp}}) {
        auto r = test::runCli(args);
        EXPECT_EQ(r.exitCode, 2) << args[args.size() - 1] << ": " << r.err;
        EXPECT_NE(r.err.find("error:"), std::string::npos);
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n') <= 2, true) << r.err;
    }
}
