// Memory plans of training graphs: each buffer's phase and saved_for checked against the autodiff
// provenance (which backward nodes say they saved which forward tensor), the training summary
// (the "2n" buffers, the inference plan of the same model) and the memplan CLI/JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "autodiff/Autodiff.h"
#include "autodiff/TrainingMemory.h"
#include "examples/TrainingExamples.h"
#include "memory/MemoryPlan.h"
#include "memory/PlanJson.h"
#include "onnx/Export.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

struct Planned {
    Model model;
    memory::MemoryPlan plan;
    autodiff::TrainingMemory training;
    nlohmann::ordered_json json;
};

Planned planTraining(Model m) {
    Planned p{std::move(m), {}, {}, {}};
    memory::PlanOptions o;
    p.plan = memory::planMemory(p.model, p.model.graph, o);
    p.training = autodiff::analyzeTrainingMemory(p.model, p.plan, o);
    p.json = memory::planToJson(p.plan);
    autodiff::addTrainingToJson(p.json, p.training);
    return p;
}

/// value name -> backward nodes whose provenance lists it as saved (the autodiff's own account).
std::map<std::string, std::set<std::string>> savedByProvenance(const Graph& g) {
    std::map<std::string, std::set<std::string>> out;
    for (NodeId n : g.nodeOrder()) {
        auto p = autodiff::provenanceOf(g.node(n));
        if (p.role != autodiff::Role::Backward) continue;
        for (const auto& s : p.saved) out[s].insert(g.node(n).displayName());
    }
    return out;
}

void expectPhasesMatchProvenance(const Planned& p) {
    const Graph& g = p.model.graph;
    const auto saved = savedByProvenance(g);
    std::set<std::string> forwardBuffersSeen;
    size_t savedCount = 0;
    for (const auto& b : p.json["buffers"]) {
        const std::string name = b["value"];
        SCOPED_TRACE(name);
        ASSERT_TRUE(b.contains("phase"));
        if (b.contains("workspace")) continue;
        auto v = g.findValue(name);
        ASSERT_TRUE(v.has_value());
        const NodeId producer = g.value(*v).producer;
        EXPECT_EQ(b["phase"], std::string(autodiff::roleName(autodiff::provenanceOf(g.node(producer)).role)));
        if (b["phase"] != "forward") {
            EXPECT_FALSE(b.contains("saved_for"));
            continue;
        }
        forwardBuffersSeen.insert(name);
        std::set<std::string> got;
        for (const auto& s : b["saved_for"]) got.insert(s.get<std::string>());
        auto it = saved.find(name);
        EXPECT_EQ(got, it == saved.end() ? std::set<std::string>{} : it->second);
        savedCount += !got.empty();
    }
    // The other way round: every dynamic forward tensor a backward node saved has a buffer saying so.
    for (const auto& [value, nodes] : saved) {
        auto v = g.findValue(value);
        ASSERT_TRUE(v.has_value()) << value;
        const Value& val = g.value(*v);
        const bool dynamicForward = val.producer != kNone && !val.isGraphOutput && !val.isConstant() &&
                                    autodiff::provenanceOf(g.node(val.producer)).role == autodiff::Role::Forward &&
                                    g.node(val.producer).opType != "Constant";
        if (dynamicForward) {
            EXPECT_TRUE(forwardBuffersSeen.count(value)) << value << " saved but has no forward buffer";
        }
    }
    EXPECT_GT(savedCount, 0u);
    EXPECT_EQ(p.json["training"]["activations_saved"]["count"].get<size_t>(), savedCount);
}

}  // namespace

TEST(TrainingMemory, MlpPhasesAndSavedForMatchProvenance) {
    Planned p = planTraining(examples::mlpTraining());
    expectPhasesMatchProvenance(p);
    // relu1's output is kept for fc2's weight gradient and relu1's own gradient; fc1's is not kept.
    std::map<std::string, nlohmann::ordered_json> byName;
    for (const auto& b : p.json["buffers"]) byName[b["value"]] = b;
    ASSERT_TRUE(byName.count("relu1_out"));
    EXPECT_GE(byName["relu1_out"]["saved_for"].size(), 2u) << byName["relu1_out"].dump();
    ASSERT_TRUE(byName.count("fc1_out"));
    EXPECT_TRUE(byName["fc1_out"]["saved_for"].empty()) << byName["fc1_out"].dump();
    // Loss and backward buffers exist, with their phases.
    std::set<std::string> phases;
    for (const auto& b : p.json["buffers"]) phases.insert(b["phase"].get<std::string>());
    EXPECT_EQ(phases, (std::set<std::string>{"forward", "loss", "backward"}));
}

TEST(TrainingMemory, CnnPhasesAndSavedForMatchProvenance) {
    Planned p = planTraining(examples::cnnTraining());
    expectPhasesMatchProvenance(p);
    // Conv workspaces take their node's phase (the backward ConvTranspose/Conv need im2col too).
    size_t forwardWorkspace = 0, backwardWorkspace = 0;
    for (const auto& b : p.json["buffers"])
        if (b.contains("workspace")) {
            forwardWorkspace += b["phase"] == "forward";
            backwardWorkspace += b["phase"] == "backward";
        }
    EXPECT_EQ(forwardWorkspace, 2u);  // conv1 (3x3 pad 1), conv2 (3x3)
    EXPECT_GT(backwardWorkspace, 0u);
}

TEST(TrainingMemory, SummaryCountsTheTwoNBuffersAndTheInferencePlan) {
    const int layers = 16;
    Planned p = planTraining(examples::deepMlpTraining(layers, 32, 8));
    const auto& t = p.json["training"];
    // n = 31 forward nodes (16 Gemm + 15 Relu); each Relu output is kept for backward (relu_i and fc_{i+1}).
    EXPECT_EQ(t["forward_nodes"].get<size_t>(), 2u * layers - 1);
    EXPECT_EQ(t["activations_saved"]["count"].get<size_t>(), static_cast<size_t>(layers - 1));
    EXPECT_EQ(t["activations_saved"]["bytes"].get<int64_t>(), (layers - 1) * 8 * 32 * 4);
    EXPECT_EQ(t["gradient_outputs"]["count"].get<size_t>(), 2u * layers);  // weight and bias per layer
    EXPECT_GT(t["gradient_buffers"]["count"].get<size_t>(), 0u);
    // The lecture's 2n: training holds about twice the forward tensors naive, and sharing saves less.
    const size_t naive = t["buffers_naive"], planned = t["buffers_planned"];
    const size_t infNaive = t["inference"]["buffers_naive"], infPlanned = t["inference"]["buffers_planned"];
    EXPECT_EQ(naive, p.plan.lifetimes.size());
    EXPECT_GE(naive, 2 * infNaive) << naive << " vs inference " << infNaive;
    EXPECT_LT(planned, naive);
    EXPECT_LE(infPlanned, 3u);  // a chain needs two or three buffers at inference
    EXPECT_GT(t["inference"]["saving"].get<double>(), t["saving"].get<double>());
    // The inference plan is the forward model's own plan.
    Model forward = examples::deepMlpForward(layers, 32, 8);
    auto inf = memory::planMemory(forward, forward.graph, {});
    EXPECT_EQ(t["inference"]["arena_bytes"].get<int64_t>(), inf.arenaBytes);
    EXPECT_EQ(t["inference"]["buffers_naive"].get<size_t>(), inf.lifetimes.size());
    // The phase boundary is the first loss node; the peak is at or after it (everything saved is alive).
    const int boundary = t["phase_boundary_step"];
    EXPECT_EQ(p.training.stepPhases[static_cast<size_t>(boundary)], "loss");
    EXPECT_EQ(p.training.stepPhases[static_cast<size_t>(boundary - 1)], "forward");
    EXPECT_GE(t["peak_step"].get<int>(), boundary - 1);
    EXPECT_EQ(t["peak_bytes"].get<int64_t>(), p.plan.arenaBytes);
}

TEST(TrainingMemory, ForwardModelIsNoTrainingGraph) {
    Model forward = examples::mlpForward();
    EXPECT_FALSE(autodiff::isTrainingGraph(forward.graph));
    EXPECT_TRUE(autodiff::isTrainingGraph(examples::mlpTraining().graph));
    // forwardPartOf gives back the forward model's nodes and outputs.
    Model part = autodiff::forwardPartOf(examples::mlpTraining());
    EXPECT_EQ(part.graph.nodeCount(), forward.graph.nodeCount());
    ASSERT_EQ(part.graph.outputs().size(), 1u);
    EXPECT_EQ(part.graph.value(part.graph.outputs()[0]).name, "y");
}

TEST(TrainingMemory, CliMemplanJsonHasPhasesOnTrainingGraphsOnly) {
    const std::string dir = test::tempDir("trainmem_memplan");
    const std::string train = dir + "/train.onnx", forward = dir + "/forward.onnx";
    onnxio::exportModelFile(examples::mlpTraining(), train);
    onnxio::exportModelFile(examples::mlpForward(), forward);
    auto r = test::runCli({"memplan", train, "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    ASSERT_TRUE(j.contains("training"));
    for (const auto& b : j["buffers"]) {
        EXPECT_TRUE(b.contains("phase")) << b.dump();
        // The contract's fields are still there.
        for (const char* key : {"value", "bytes", "first", "last", "offset"}) EXPECT_TRUE(b.contains(key)) << key;
    }
    // Provenance survives the file (doc strings): the file's plan matches the in-memory one.
    Planned p = planTraining(examples::mlpTraining());
    EXPECT_EQ(j["training"]["activations_saved"]["count"].dump(), p.json["training"]["activations_saved"]["count"].dump());
    auto text = test::runCli({"memplan", train});
    EXPECT_NE(text.out.find("saved for backward:"), std::string::npos) << text.out;
    auto f = test::runCli({"memplan", forward, "--json"});
    ASSERT_EQ(f.exitCode, 0) << f.err;
    auto fj = nlohmann::json::parse(f.out);
    EXPECT_FALSE(fj.contains("training"));
    EXPECT_FALSE(fj["buffers"][0].contains("phase"));
}
