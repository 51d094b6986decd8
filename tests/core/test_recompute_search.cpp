// Solvers over recompute sets (autodiff/RecomputeSearch.cpp): a budget at the arena √n (or all)
// reaches is met with no more extra FLOPs; the Pareto curve is never dominated by √n or all;
// min cut and budget leave every gradient unchanged (interpreter); on tiny graphs the budget
// solver is compared with an exhaustive search over every subset of saved activations.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "TestSupport.h"
#include "TrainingTestSupport.h"
#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "autodiff/RecomputeFacts.h"
#include "examples/TrainingExamples.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

const std::string kFixtures = PASSLENS_FIXTURES_DIR;

Model fixtureTraining(const std::string& fixture) {
    const Model forward = onnxio::importModelFile(kFixtures + "/" + fixture + "_static.onnx");
    return autodiff::makeTrainingModel(forward, {"mse", "", {"all"}});
}

/// The models of the acceptance lines, at test size: the committed ResNet, EfficientNet-B0, ViT and
/// GPT exports, and two MLPs where √n does recompute.
std::vector<std::pair<std::string, Model>> models() {
    std::vector<std::pair<std::string, Model>> out;
    for (const char* f : {"resnet_tiny", "efficientnet_b0_tiny", "vit_tiny", "gpt_tiny"}) out.emplace_back(f, fixtureTraining(f));
    out.emplace_back("mlp16", examples::mlp16Training());
    out.emplace_back("mlp40", examples::deepMlpTraining(40, 16, 4));
    return out;
}

}  // namespace

TEST(RecomputeSearch, BudgetAtTheArenaOfSqrtOrAllIsMetWithNoMoreFlops) {
    size_t strictlyCheaper = 0;
    for (const auto& [id, train] : models()) {
        for (const char* reference : {"sqrt", "all"}) {
            SCOPED_TRACE(id + " vs " + reference);
            Model m;
            autodiff::RecomputeResult r, b;
            ASSERT_NO_FATAL_FAILURE(test::expectBudgetAtArenaOf(train, reference, m, r, b));
            strictlyCheaper += b.extraFlops < r.extraFlops;
        }
    }
    // `all` costs about a forward pass and rarely lowers the arena: a budget at its arena must find cheaper.
    EXPECT_GE(strictlyCheaper, 6u);
}

TEST(RecomputeSearch, ParetoCurveIsNeverDominatedBySqrtOrAll) {
    for (const auto& [id, train] : models()) {
        SCOPED_TRACE(id);
        const auto c = autodiff::recomputeCurve(train);
        ASSERT_FALSE(c.curve.empty());
        // The free end: store everything, or recompute only what costs no FLOPs (a Reshape, a Transpose).
        EXPECT_LE(c.curve.back().arenaBytes, c.storeAll.arenaBytes);
        EXPECT_EQ(c.curve.back().extraFlops, 0);
        for (size_t i = 1; i < c.curve.size(); ++i) {
            EXPECT_GT(c.curve[i].arenaBytes, c.curve[i - 1].arenaBytes);
            EXPECT_LT(c.curve[i].extraFlops, c.curve[i - 1].extraFlops);
        }
        test::expectCurveNotDominatedBySqrtOrAll(c);
    }
}

TEST(RecomputeSearch, ParetoCurveGoesBelowSqrtWhereSqrtFindsNothing) {
    // The GPT export: no √n segmentation lowers its arena, dropping cheap activations live at the
    // peak does (measured 72192 -> 35840 B for 0.36 forward passes).
    const auto c = autodiff::recomputeCurve(fixtureTraining("gpt_tiny"));
    EXPECT_EQ(c.sqrt.arenaBytes, c.storeAll.arenaBytes);
    EXPECT_LE(static_cast<double>(c.curve.front().arenaBytes), 0.75 * static_cast<double>(c.storeAll.arenaBytes));
    EXPECT_LT(c.curve.front().extraFlops, 0.5 * c.forwardFlops);
}

TEST(RecomputeSearch, MinCutAndBudgetKeepEveryGradient) {
    for (const char* f : {"resnet_tiny", "vit_tiny", "gpt_tiny"}) {
        const Model train = fixtureTraining(f);
        const int64_t none = autodiff::plannedPeak(train);
        for (const std::string& strategy : {std::string("mincut"), std::string("mincut:heavy"), "budget=" + std::to_string(none * 85 / 100)}) {
            SCOPED_TRACE(std::string(f) + " " + strategy);
            Model m = train;
            const auto r = test::recomputeWith(m, strategy);
            if (r.feasible && !r.addedNodes.empty()) {
                EXPECT_EQ(autodiff::plannedPeak(m), r.peakAfter) << r.message;
            }
            test::expectSameGradients(train, m);
        }
    }
    // The min cut keeps forward values the backward pass never read (the smaller side of a cut).
    Model gpt = fixtureTraining("gpt_tiny");
    const auto r = test::recomputeWith(gpt, "mincut");
    EXPECT_FALSE(r.dropped.empty()) << r.message;
    EXPECT_LT(r.peakAfter, r.peakBefore) << r.message;
}

TEST(RecomputeSearch, CliParetoJsonAndText) {
    const std::string dir = test::tempDir("recompute_pareto");
    auto j = test::runCli({"grad", kFixtures + "/gpt_tiny_static.onnx", "-o", dir + "/t.onnx", "--recompute", "pareto", "--json"});
    ASSERT_EQ(j.exitCode, 0) << j.err;
    const auto json = nlohmann::json::parse(j.out);
    ASSERT_TRUE(json.contains("pareto")) << j.out;
    const auto& curve = json["pareto"]["curve"];
    ASSERT_GE(curve.size(), 3u);
    EXPECT_EQ(curve.back()["arena_bytes"], json["pareto"]["store_all"]["arena_bytes"]);
    for (const char* key : {"store_all", "sqrt", "all"}) EXPECT_TRUE(json["pareto"][key].contains("forward_passes")) << key;
    auto t = test::runCli({"grad", kFixtures + "/gpt_tiny_static.onnx", "-o", dir + "/t.onnx", "--recompute", "pareto"});
    ASSERT_EQ(t.exitCode, 0) << t.err;
    EXPECT_NE(t.out.find("recompute pareto: "), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("(sqrt)"), std::string::npos) << t.out;
    auto b = test::runCli({"grad", kFixtures + "/gpt_tiny_static.onnx", "-o", dir + "/b.onnx", "--recompute", "budget=60000", "--json"});
    ASSERT_EQ(b.exitCode, 0) << b.err;
    const auto bj = nlohmann::json::parse(b.out);
    EXPECT_LE(bj["recompute"]["arena_after_bytes"].get<int64_t>(), 60000);
    EXPECT_TRUE(bj["recompute"]["feasible"].get<bool>());
}

TEST(RecomputeSearch, BudgetSolverAgainstEverySubsetOnTinyGraphs) {
    // Exhaustive reference: every subset of the saved activations recomputed (heavy ops allowed),
    // each planned. For every arena some subset reaches, the fewest FLOPs that fit it, against the
    // solver's answer for that budget. The solver may do better (a min cut keeps values the
    // backward pass did not read); where it is worse the gap is reported and bounded.
    struct Tiny {
        std::string id;
        Model train;
    };
    std::vector<Tiny> tiny = {{"mlp", examples::mlpTraining()},
                              {"cnn", examples::cnnTraining()},
                              {"mlp8", examples::deepMlpTraining(8, 8, 2)},
                              {"mlp10x16", examples::deepMlpTraining(10, 16, 4)}};
    size_t budgets = 0, matched = 0;
    double worstGap = 0;
    for (auto& [id, train] : tiny) {
        SCOPED_TRACE(id);
        const autodiff::remat::ForwardFacts facts(train.graph, true);
        const auto& cands = facts.candidates();
        ASSERT_LE(cands.size(), 12u);
        std::map<int64_t, double> fewestFlopsAt;  // arena -> fewest FLOPs reaching exactly it
        for (uint32_t mask = 0; mask < (1u << cands.size()); ++mask) {
            std::vector<ValueId> drop;
            for (size_t i = 0; i < cands.size(); ++i)
                if (mask & (1u << i)) drop.push_back(cands[i]);
            const auto c = autodiff::remat::evaluate(train, facts, drop);
            auto [it, fresh] = fewestFlopsAt.emplace(c.peak, c.flops);
            if (!fresh) it->second = std::min(it->second, c.flops);
        }
        double best = 1e300;
        for (const auto& [arena, flops] : fewestFlopsAt) {  // ascending arena: best = fewest FLOPs fitting it
            best = std::min(best, flops);
            Model m = train;
            const auto r = test::recomputeWith(m, "budget=" + std::to_string(arena));
            ++budgets;
            ASSERT_TRUE(r.feasible) << "budget " << arena << ": " << r.message;
            EXPECT_LE(autodiff::plannedPeak(m), arena);
            if (r.extraFlops <= best) ++matched;
            else worstGap = std::max(worstGap, (r.extraFlops - best) / std::max(1.0, best));
        }
    }
    std::cout << "[ recompute ] budget solver vs every subset: " << matched << " of " << budgets
              << " budgets at or below the exact fewest FLOPs; worst gap " << worstGap * 100 << " %\n";
    EXPECT_GE(budgets, 10u);
    EXPECT_GE(matched * 10, budgets * 9) << "the solver misses the exact optimum on more than one budget in ten";
    EXPECT_LE(worstGap, 0.5);
}
