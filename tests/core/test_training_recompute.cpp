// Recomputation (gradient checkpointing): every strategy leaves every gradient unchanged (our
// interpreter, the same inputs), sqrt on a 16-layer MLP plans ≤ 0.6× the arena for about one extra
// forward pass, budgets are met or refused with a clear message, the rules that keep a tensor say
// so, and the pass and CLI entry points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "TrainingTestSupport.h"
#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "eval/Interpreter.h"
#include "examples/TrainingExamples.h"
#include "examples/Builder.h"
#include "ir/Error.h"
#include "onnx/Export.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::ir;
using autodiff::RecomputeOptions;

namespace {

using test::expectSameGradients;

autodiff::RecomputeResult recompute(Model& m, const std::string& strategy) {
    return autodiff::recomputeModel(m, autodiff::parseRecomputeOptions(strategy), false);
}

size_t countRole(const Graph& g, autodiff::Role r) {
    size_t n = 0;
    for (NodeId id : g.nodeOrder()) n += autodiff::provenanceOf(g.node(id)).role == r;
    return n;
}

}  // namespace

TEST(TrainingRecompute, ParsesStrategiesAndRejectsOthers) {
    EXPECT_EQ(autodiff::parseRecomputeOptions("none").strategy, RecomputeOptions::Strategy::None);
    EXPECT_EQ(autodiff::parseRecomputeOptions("all").strategy, RecomputeOptions::Strategy::All);
    auto s = autodiff::parseRecomputeOptions("sqrt");
    EXPECT_EQ(s.strategy, RecomputeOptions::Strategy::Sqrt);
    EXPECT_TRUE(s.allowsHeavy());
    auto b = autodiff::parseRecomputeOptions("budget=64K");
    EXPECT_EQ(b.strategy, RecomputeOptions::Strategy::Budget);
    EXPECT_EQ(b.budgetBytes, 65536);
    EXPECT_TRUE(b.allowsHeavy());  // FLOPs decide under budget
    EXPECT_FALSE(autodiff::parseRecomputeOptions("budget=100:no-heavy").allowsHeavy());
    EXPECT_FALSE(autodiff::parseRecomputeOptions("mincut").allowsHeavy());  // banned, as PyTorch's partitioner
    EXPECT_TRUE(autodiff::parseRecomputeOptions("mincut:heavy").allowsHeavy());
    EXPECT_EQ(autodiff::parseRecomputeOptions("pareto").strategy, RecomputeOptions::Strategy::Pareto);
    EXPECT_FALSE(autodiff::parseRecomputeOptions("sqrt:no-heavy").allowsHeavy());
    EXPECT_EQ(autodiff::parseRecomputeOptions("budget=2M:heavy").text(), "budget=2097152:heavy");
    for (const char* bad : {"", "sqrt2", "budget=", "budget=-5", "budget=12X", "budget=1:fast", "every"}) {
        try {
            autodiff::parseRecomputeOptions(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::BadInput);
            EXPECT_NE(std::string(e.what()).find("none, sqrt, all, mincut, pareto or budget=BYTES"), std::string::npos) << e.what();
        }
    }
}

TEST(TrainingRecompute, EveryStrategyKeepsEveryGradientOnMlpCnnAndMlp16) {
    const std::vector<std::pair<std::string, Model>> models = {
        {"mlp", examples::mlpTraining()}, {"cnn", examples::cnnTraining()}, {"mlp16", examples::deepMlpTraining(16, 32, 8)}};
    for (const auto& [id, train] : models) {
        SCOPED_TRACE(id);
        const int64_t none = autodiff::plannedPeak(train);
        size_t changedRuns = 0;
        for (const std::string& strategy : std::vector<std::string>
             {std::string("none"), std::string("sqrt"), std::string("all"), std::string("mincut"), std::string("mincut:heavy"),
              "budget=" + std::to_string(none * 9 / 10) + ":no-heavy", "budget=" + std::to_string(none * 6 / 10),
              "budget=" + std::to_string(none * 9 / 10) + ":heavy", "budget=" + std::to_string(none * 7 / 10) + ":heavy"}) {
            SCOPED_TRACE(strategy);
            Model m = train;
            auto r = recompute(m, strategy);
            EXPECT_EQ(countRole(m.graph, autodiff::Role::Recompute), r.addedNodes.size());
            EXPECT_EQ(r.peakBefore, none);
            if (!r.addedNodes.empty()) {
                ++changedRuns;
                EXPECT_EQ(autodiff::plannedPeak(m), r.peakAfter);  // the reported peak is the plan's
                EXPECT_GT(r.extraFlops, 0);
            }
            expectSameGradients(train, m);
        }
        EXPECT_GT(changedRuns, 0u) << "no strategy recomputed anything: the comparison proved nothing";
    }
}

TEST(TrainingRecompute, SqrtOnSixteenLayerMlpHalvesTheArenaForOneForwardPass) {
    Model m = examples::mlp16Training();
    auto r = recompute(m, "sqrt");
    ASSERT_FALSE(r.addedNodes.empty()) << r.message;
    EXPECT_LE(static_cast<double>(r.peakAfter), 0.6 * static_cast<double>(r.peakBefore)) << r.message;
    EXPECT_EQ(autodiff::plannedPeak(m), r.peakAfter);
    // Chen: about one extra forward pass (the tail segment is not recomputed, so a bit less).
    const double passes = r.extraFlops / r.forwardFlops;
    EXPECT_GT(passes, 0.6) << r.message;
    EXPECT_LE(passes, 1.0) << r.message;
    // √15 ≈ 4: three or four checkpoints among the 15 saved Relu outputs, the rest recomputed.
    EXPECT_EQ(r.savedActivations.size(), 15u);
    EXPECT_GE(r.checkpoints.size(), 2u);
    EXPECT_LE(r.checkpoints.size(), 5u);
    EXPECT_EQ(r.dropped.size() + r.checkpoints.size(), 15u);
    EXPECT_NE(r.message.find("forward passes"), std::string::npos);
}

TEST(TrainingRecompute, CopiesSayWhereTheyCameFromAndSitJustBeforeTheirBackwardReaders) {
    Model m = examples::mlp16Training();
    recompute(m, "sqrt");
    const Graph& g = m.graph;
    const auto& order = g.nodeOrder();
    size_t copies = 0;
    for (size_t i = 0; i < order.size(); ++i) {
        const Node& n = g.node(order[i]);
        auto p = autodiff::provenanceOf(n);
        if (p.role != autodiff::Role::Recompute) continue;
        ++copies;
        EXPECT_EQ(p.note, "recomputed from " + p.forwardNode);
        auto original = g.findNode(p.forwardNode);
        ASSERT_TRUE(original.has_value()) << p.forwardNode;
        EXPECT_EQ(g.node(*original).opType, n.opType);
        EXPECT_EQ(autodiff::provenanceOf(g.node(*original)).role, autodiff::Role::Forward);
        // Between the copy and its first reader there are only other copies: it is placed just
        // before the backward node that needs it, not at the end of the forward pass.
        size_t j = i + 1;
        while (j < order.size() && autodiff::provenanceOf(g.node(order[j])).role == autodiff::Role::Recompute) ++j;
        ASSERT_LT(j, order.size());
        EXPECT_EQ(autodiff::provenanceOf(g.node(order[j])).role, autodiff::Role::Backward) << n.displayName();
        // No forward node reads a copy.
        for (ValueId v : n.outputs)
            for (NodeId c : g.value(v).consumers)
                EXPECT_NE(autodiff::provenanceOf(g.node(c)).role, autodiff::Role::Forward);
    }
    EXPECT_GT(copies, 10u);
}

TEST(TrainingRecompute, BudgetIsMetWhenFeasibleAndRefusedClearlyWhenNot) {
    const Model train = examples::mlp16Training();
    const int64_t none = autodiff::plannedPeak(train);
    for (double fraction : {0.95, 0.8, 0.65}) {
        SCOPED_TRACE(fraction);
        const int64_t budget = static_cast<int64_t>(fraction * static_cast<double>(none));
        Model m = train;
        auto r = recompute(m, "budget=" + std::to_string(budget) + ":heavy");
        ASSERT_TRUE(r.feasible) << r.message;
        EXPECT_LE(autodiff::plannedPeak(m), budget) << r.message;
        EXPECT_FALSE(r.addedNodes.empty());
    }
    // A budget at or above the plan needs nothing.
    Model same = train;
    auto r = recompute(same, "budget=" + std::to_string(none) + ":heavy");
    EXPECT_TRUE(r.feasible);
    EXPECT_TRUE(r.addedNodes.empty());
    // One byte cannot be met: the message names the lowest arena; the model is unchanged.
    Model tiny = train;
    r = recompute(tiny, "budget=1:heavy");
    EXPECT_FALSE(r.feasible);
    EXPECT_NE(r.message.find("infeasible: the lowest planned arena is "), std::string::npos) << r.message;
    EXPECT_EQ(tiny.graph.nodeCount(), train.graph.nodeCount());
    EXPECT_THROW(autodiff::recomputeModel(tiny, autodiff::parseRecomputeOptions("budget=1:heavy")), Error);
}

TEST(TrainingRecompute, BudgetOnADeepChainIsMetForLessThanAForwardPass) {
    // 100 layers: dropping every activation recomputes the whole chain at once (no saving), so the
    // cheapest-first prefixes cannot reach 60 %; Chen's segmentations and the peak-directed greedy can.
    const Model train = examples::deepMlpTraining(100, 8, 2);
    const int64_t none = autodiff::plannedPeak(train);
    const int64_t budget = none * 6 / 10;
    Model all = train;
    EXPECT_GT(recompute(all, "all").peakAfter, budget);
    Model m = train;
    auto r = recompute(m, "budget=" + std::to_string(budget) + ":heavy");
    ASSERT_TRUE(r.feasible) << r.message;
    EXPECT_LE(autodiff::plannedPeak(m), budget);
    EXPECT_LT(r.extraFlops, r.forwardFlops);
}

TEST(TrainingRecompute, HeavyOpsAreKeptUnderNoHeavyAndTheRuleIsNamed) {
    // Every Relu output of the MLP needs its Gemm recomputed: banned by :no-heavy.
    Model m = examples::mlp16Training();
    const int64_t none = autodiff::plannedPeak(m);
    auto r = recompute(m, "budget=" + std::to_string(none / 2) + ":no-heavy");
    EXPECT_FALSE(r.feasible);
    EXPECT_EQ(r.keptByRule.size(), 15u);
    ASSERT_FALSE(r.keptByRule.empty());
    EXPECT_EQ(r.keptByRule[0].rule, "heavy-op");
    EXPECT_NE(r.keptByRule[0].detail.find("needs Gemm 'fc"), std::string::npos) << r.keptByRule[0].detail;
    EXPECT_NE(r.message.find("15 by heavy-op"), std::string::npos) << r.message;
    // The CNN's Relu/Sigmoid/pool outputs come from saved Conv outputs or pools: some are cheap.
    Model cnn = examples::cnnTraining();
    const int64_t cnnNone = autodiff::plannedPeak(cnn);
    auto c = recompute(cnn, "budget=" + std::to_string(cnnNone - 1) + ":no-heavy");
    for (const auto& k : c.keptByRule) EXPECT_EQ(k.rule, "heavy-op") << k.value;
}

TEST(TrainingRecompute, RandomOpsAreNeverRecomputed) {
    // a = Relu(x + noise): the weight gradient of w saves a; recomputing a would draw new noise.
    GraphBuilder b("noisy");
    ValueId x = b.input("x", DataType::Float, {4, 8});
    ValueId noise = b.op("RandomNormalLike", {x}, {Attribute::makeFloat("scale", 0.1f)}, "noise");
    ValueId a = b.op("Relu", {b.op("Add", {x, noise}, {}, "noisy_add")}, {}, "relu");
    ValueId y = b.op("MatMul", {a, b.constant("w", randomFloats({8, 3}, 7))}, {}, "fc");
    b.graph().renameValue(y, "y");
    b.output(y);
    autodiff::AutodiffOptions o;
    o.wrt = {"w"};
    Model train = autodiff::makeTrainingModel(b.finish(), o);
    for (const char* strategy : {"sqrt", "budget=1:heavy"}) {
        Model m = train;
        auto r = recompute(m, strategy);
        ASSERT_EQ(r.keptByRule.size(), 1u) << strategy;
        EXPECT_EQ(r.keptByRule[0].value, "relu_out");
        EXPECT_EQ(r.keptByRule[0].rule, "nondeterministic");
        EXPECT_NE(r.keptByRule[0].detail.find("RandomNormalLike 'noise'"), std::string::npos) << r.keptByRule[0].detail;
        EXPECT_EQ(countRole(m.graph, autodiff::Role::Recompute), 0u);
    }
}

TEST(TrainingRecompute, PassInAPipelineAndOnAForwardModel) {
    Model m = examples::deepMlpForward(16, 32, 8);
    passes::PassManager pm;
    pm.addPass("autodiff");
    pm.addPass("recompute");
    passes::PipelineOptions po;
    po.pass.params["recompute.strategy"] = "sqrt";
    auto result = pm.run(m, po);
    ASSERT_EQ(result.steps.size(), 2u);
    const auto& rc = result.steps[1].result;
    EXPECT_EQ(rc.name, "recompute");
    EXPECT_GT(rc.nodesAfter, rc.nodesBefore);
    bool applied = false;
    for (const auto& rem : rc.remarks) applied |= rem.kind == passes::RemarkKind::Applied && rem.message.find("sqrt:") == 0;
    EXPECT_TRUE(applied);
    EXPECT_GT(countRole(m.graph, autodiff::Role::Recompute), 0u);
    // Run twice: the second run says it already happened and changes nothing.
    const size_t nodes = m.graph.nodeCount();
    passes::PassManager again;
    again.addPass("recompute");
    auto second = again.run(m, po);
    EXPECT_EQ(m.graph.nodeCount(), nodes);
    ASSERT_FALSE(second.steps[0].result.remarks.empty());
    EXPECT_NE(second.steps[0].result.remarks[0].message.find("already"), std::string::npos);
    // A forward model: nothing to do, said as a missed remark.
    Model forward = examples::mlpForward();
    passes::PassManager pf;
    pf.addPass("recompute");
    auto f = pf.run(forward, po);
    ASSERT_FALSE(f.steps[0].result.remarks.empty());
    EXPECT_NE(f.steps[0].result.remarks[0].message.find("not a training graph"), std::string::npos);
}

TEST(TrainingRecompute, CliGradAndOptimize) {
    const std::string dir = test::tempDir("trainmem_cli");
    const std::string mlp = dir + "/mlp16.onnx", train = dir + "/train.onnx";
    onnxio::exportModelFile(examples::deepMlpForward(16, 32, 8), mlp);
    auto ok = test::runCli({"grad", mlp, "-o", dir + "/sqrt.onnx", "--recompute", "sqrt"});
    ASSERT_EQ(ok.exitCode, 0) << ok.err;
    EXPECT_NE(ok.out.find("recompute sqrt: "), std::string::npos) << ok.out;
    EXPECT_NE(ok.out.find("forward passes"), std::string::npos) << ok.out;
    auto bad = test::runCli({"grad", mlp, "-o", dir + "/x.onnx", "--recompute", "half"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("none, sqrt, all, mincut, pareto or budget=BYTES"), std::string::npos) << bad.err;
    auto infeasible = test::runCli({"grad", mlp, "-o", dir + "/x.onnx", "--recompute", "budget=1"});
    EXPECT_EQ(infeasible.exitCode, 2);
    EXPECT_NE(infeasible.err.find("infeasible"), std::string::npos) << infeasible.err;
    EXPECT_LE(std::count(infeasible.err.begin(), infeasible.err.end(), '\n'), 2) << infeasible.err;

    ASSERT_EQ(test::runCli({"grad", mlp, "-o", train}).exitCode, 0);
    auto opt = test::runCli({"optimize", train, "-o", dir + "/opt.onnx", "--passes", "recompute", "--recompute", "budget=12K:heavy",
                             "--report", dir + "/report.json"});
    ASSERT_EQ(opt.exitCode, 0) << opt.err;
    auto memplan = test::runCli({"memplan", dir + "/opt.onnx", "--json"});
    ASSERT_EQ(memplan.exitCode, 0) << memplan.err;
    auto j = nlohmann::json::parse(memplan.out);
    EXPECT_LE(j["arena_bytes"].get<int64_t>(), 12 * 1024);
    EXPECT_GT(j["training"]["recompute_buffers"]["count"].get<size_t>(), 0u);
}
