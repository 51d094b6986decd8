// Training graphs of real torch.onnx exports (tests/models): `grad --loss mse` on each fixture, the
// training graph run in the interpreter on closed-form inputs, every `<initializer>_grad` compared
// with PyTorch autograd's gradient of the same loss (tests/models/<fixture>.grads.json, written by
// tests/models/gen_grads.py from the same models, seeds and input formulas). Also the dynamic-batch
// exports at batch 1 and 3, `--recompute` sqrt, all and a budget, and memplan of the training graphs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "autodiff/TrainingMemory.h"
#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "ir/Tensor.h"
#include "memory/MemoryPlan.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;
using nlohmann::json;

namespace {

const std::string kFixtures = PASSLENS_FIXTURES_DIR;

json loadReference(const std::string& fixture) {
    std::ifstream f(kFixtures + "/" + fixture + ".grads.json");
    if (!f) throw std::runtime_error("missing " + fixture + ".grads.json (run tests/models/gen_grads.py)");
    return json::parse(f);
}

/// The inputs gen_grads.py feeds torch: float x[i] = sin(0.37·i + 1), token ids (7·i + 3) mod vocab.
TensorPtr formulaInput(const json& spec, const json& dims) {
    std::vector<int64_t> shape;
    for (const auto& d : spec["dims"]) shape.push_back(d.is_number() ? d.get<int64_t>() : dims[d.get<std::string>()].get<int64_t>());
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (spec["dtype"] == "float32") {
        std::vector<float> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(std::sin(0.37 * double(i) + 1.0));
        return makeTensorOf<float>(DataType::Float, shape, v);
    }
    const std::string formula = spec["formula"];
    const int64_t vocab = std::stoll(formula.substr(formula.rfind('%') + 1));
    std::vector<int64_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = (7 * i + 3) % vocab;
    return int64Tensor(shape, v);
}

TensorPtr formulaTarget(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float(0.5 * std::cos(0.29 * double(i) + 2.0));
    return makeTensorOf<float>(DataType::Float, dims, v);
}

struct Comparison {
    size_t gradients = 0;
    double worstRel = 0;  ///< worst |Δ| / max|g_torch| over the compared values
    std::string worst;
};

/// (training-graph initializer, PyTorch summary) for every gradient of `run`. The reference keys
/// them by the static export's names: the dynamic export numbers some weights differently
/// (`dynamic_names`) and stores some parameters another way (`static_only` there, replaced by the
/// run's `dynamic_gradients`: GPT's whole position table instead of its folded leading rows).
std::vector<std::pair<std::string, json>> expectedGradients(const json& ref, const json& run, bool dynamicExport) {
    std::vector<std::pair<std::string, json>> out;
    const json none = json::object(), noList = json::array();
    const json& renamed = ref.contains("dynamic_names") ? ref["dynamic_names"] : none;
    const json& staticOnly = ref.contains("static_only") ? ref["static_only"] : noList;
    for (const auto& [name, s] : run["gradients"].items()) {
        if (!dynamicExport) {
            out.emplace_back(name, s);
        } else if (std::find(staticOnly.begin(), staticOnly.end(), name) == staticOnly.end()) {
            out.emplace_back(renamed.contains(name) ? renamed[name].get<std::string>() : name, s);
        }
    }
    if (dynamicExport && run.contains("dynamic_gradients"))
        for (const auto& [name, s] : run["dynamic_gradients"].items()) out.emplace_back(name, s);
    return out;
}

/// Runs `train` on `run` of the reference and compares every gradient the reference lists.
Comparison compareRun(const Model& train, const json& ref, const json& run, const std::string& label, bool dynamicExport = false) {
    Comparison out;
    std::vector<TensorPtr> inputs;
    for (ValueId v : eval::runtimeInputs(train.graph)) {
        const std::string& name = train.graph.value(v).name;
        if (name == ref["output"].get<std::string>() + "_target") {
            inputs.push_back(formulaTarget(run["output_dims"].get<std::vector<int64_t>>()));
            continue;
        }
        auto spec = std::find_if(ref["inputs"].begin(), ref["inputs"].end(), [&](const json& s) { return s["name"] == name; });
        if (spec == ref["inputs"].end()) throw std::runtime_error(label + ": no reference for input " + name);
        inputs.push_back(formulaInput(*spec, run["dims"]));
    }
    auto outs = eval::run(train, inputs);
    std::map<std::string, TensorPtr> byName;
    for (size_t i = 0; i < outs.size(); ++i) byName[train.graph.value(train.graph.outputs()[i]).name] = outs[i];
    EXPECT_NEAR(double(byName.at("loss")->as<float>()[0]), run["loss"].get<double>(), 1e-4 + 1e-4 * std::abs(run["loss"].get<double>()))
        << label << ": loss";
    for (const auto& expected : expectedGradients(ref, run, dynamicExport)) {
        const std::string& init = expected.first;
        const auto& s = expected.second;
        auto it = byName.find(init + "_grad");
        if (it == byName.end()) {
            ADD_FAILURE() << label << ": the training graph has no output " << init << "_grad";
            continue;
        }
        const Tensor& g = *it->second;
        const float* p = g.as<float>();
        const int64_t n = g.elementCount();
        const double maxAbs = s["max_abs"], tol = 1e-4 + 1e-3 * maxAbs;
        auto check = [&](double got, double want, const std::string& what, double tolerance) {
            const double d = std::abs(got - want);
            EXPECT_LE(d, tolerance) << label << ": " << init << "_grad " << what << ": ours " << got << ", PyTorch " << want;
            const double rel = d / std::max(maxAbs, 1e-12);
            if (rel > out.worstRel) {
                out.worstRel = rel;
                out.worst = init + "_grad " + what;
            }
        };
        double sum = 0, sumSq = 0, ourMax = 0;
        for (int64_t i = 0; i < n; ++i) {
            sum += p[i];
            sumSq += double(p[i]) * p[i];
            ourMax = std::max(ourMax, double(std::abs(p[i])));
        }
        const auto first = s["first"].get<std::vector<double>>();
        for (size_t i = 0; i < first.size() && int64_t(i) < n; ++i) check(p[i], first[i], "[" + std::to_string(i) + "]", tol);
        if (s.contains("strided")) {
            const auto strided = s["strided"].get<std::vector<double>>();
            for (size_t k = 0; k < strided.size(); ++k) {
                const int64_t at = int64_t(k) * n / int64_t(strided.size());
                check(p[at], strided[k], "[" + std::to_string(at) + "]", tol);
            }
        }
        check(ourMax, maxAbs, "max|g|", tol);
        // Sums: the elementwise tolerance scaled by the element count's square root (errors of
        // float32 accumulation add like random ones), bounded by the sum of magnitudes.
        EXPECT_LE(std::abs(sum - s["sum"].get<double>()), 1e-4 + 1e-3 * s["sum_abs"].get<double>())
            << label << ": " << init << "_grad sum: ours " << sum << ", PyTorch " << s["sum"].get<double>();
        EXPECT_LE(std::abs(sumSq - s["sum_sq"].get<double>()), 1e-8 + 2e-3 * s["sum_sq"].get<double>())
            << label << ": " << init << "_grad sum of squares: ours " << sumSq << ", PyTorch " << s["sum_sq"].get<double>();
        ++out.gradients;
    }
    return out;
}

/// The training model of a fixture file; `pins` fix symbolic dims (a CNN's height and width).
Model trainingModel(const std::string& file, const std::vector<std::pair<std::string, int64_t>>& pins = {}) {
    onnxio::ImportOptions io;
    io.pinnedDims = pins;
    const Model forward = onnxio::importModelFile(kFixtures + "/" + file, io);
    return autodiff::makeTrainingModel(forward, {"mse", "", {"all"}});
}

/// The run's symbolic dims other than the batch, to pin (CNNs: height and width).
std::vector<std::pair<std::string, int64_t>> nonBatchPins(const json& run) {
    std::vector<std::pair<std::string, int64_t>> pins;
    for (const auto& [name, value] : run["dims"].items())
        if (name != "batch" && name != "seq") pins.emplace_back(name, value.get<int64_t>());
    return pins;
}

void report(const std::string& label, const Comparison& c) {
    std::cout << "[ real export ] " << label << ": " << c.gradients << " gradients, worst |Δ|/max|g| " << c.worstRel
              << (c.worst.empty() ? "" : " (" + c.worst + ")") << "\n";
}

class AutodiffRealExports : public ::testing::TestWithParam<std::string> {};
class AutodiffRealExportsDynamic : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(AutodiffRealExports, StaticExportGradientsEqualPyTorch) {
    // The opset 18–23 rewrites hold the same weights (Gelu ops at ≥ 20, Reduce axes inputs at ≥ 18).
    const std::string file = GetParam();
    const json ref = loadReference(file.substr(0, file.find("_static")));
    const Model train = trainingModel(file + ".onnx");
    const Comparison c = compareRun(train, ref, ref["runs"][0], file);
    EXPECT_GT(c.gradients, 5u);
    report(file, c);
}

TEST_P(AutodiffRealExportsDynamic, DynamicBatchGradientsAtOneAndThreeEqualPyTorch) {
    // The batch (and a transformer's seq) stays symbolic, a CNN's height and width are pinned: one
    // training graph runs at both batch sizes.
    const json ref = loadReference(GetParam());
    const Model train = trainingModel(GetParam() + "_dynamic.onnx", nonBatchPins(ref["runs"][0]));
    ASSERT_EQ(ref["runs"].size(), 2u);
    for (const auto& run : ref["runs"]) {
        const std::string label = GetParam() + "_dynamic batch " + std::to_string(run["dims"]["batch"].get<int64_t>());
        const Comparison c = compareRun(train, ref, run, label, true);
        EXPECT_GT(c.gradients, 5u);
        report(label, c);
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AutodiffRealExports,
                         ::testing::Values("resnet_tiny_static", "mobilenetv3_small_static", "efficientnet_b0_tiny_static",
                                           "convnext_tiny_static", "vit_tiny_static", "transformer_encoder_static", "gpt_tiny_static",
                                           "deeplabv3_tiny_static", "swin_tiny_static", "resnet_tiny_static_opset23",
                                           "vit_tiny_static_opset20", "transformer_encoder_static_opset18",
                                           "transformer_encoder_static_opset20", "gpt_tiny_static_opset21", "gpt_tiny_static_opset23",
                                           "swin_tiny_static_opset23"),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Fixtures, AutodiffRealExportsDynamic,
                         ::testing::Values("resnet_tiny", "mobilenetv3_small", "efficientnet_b0_tiny", "convnext_tiny", "vit_tiny",
                                           "transformer_encoder", "gpt_tiny", "deeplabv3_tiny", "swin_tiny"),
                         [](const auto& info) { return info.param; });

TEST(TrainingRealExports, RecomputationKeepsGradients) {
    // sqrt finds no segmentation that lowers these small arenas (it may keep everything); `all`
    // and a budget do drop activations, and the recomputed copies must give the same gradients.
    struct Case {
        std::string fixture, strategy;
        bool mustRecompute;
    };
    for (const Case& k : {Case{"resnet_tiny", "sqrt", false}, Case{"gpt_tiny", "sqrt", false}, Case{"resnet_tiny", "all", true},
                          Case{"gpt_tiny", "all", true}, Case{"vit_tiny", "all", true}, Case{"mobilenetv3_small", "budget=200K", true}}) {
        const json ref = loadReference(k.fixture);
        Model train = trainingModel(k.fixture + "_static.onnx");
        const auto result = autodiff::recomputeModel(train, autodiff::parseRecomputeOptions(k.strategy));
        if (k.mustRecompute) {
            EXPECT_FALSE(result.dropped.empty()) << k.fixture << " " << k.strategy << ": " << result.message;
        }
        const std::string label = k.fixture + " --recompute " + k.strategy + " (" + std::to_string(result.dropped.size()) + " dropped)";
        const Comparison c = compareRun(train, ref, ref["runs"][0], label);
        EXPECT_GT(c.gradients, 5u);
        report(label, c);
    }
}

TEST(TrainingRealExports, MemoryPlanOfTrainingGraphs) {
    for (const std::string fixture : {"resnet_tiny", "mobilenetv3_small", "vit_tiny", "gpt_tiny"}) {
        const Model train = trainingModel(fixture + "_static.onnx");
        ASSERT_TRUE(autodiff::isTrainingGraph(train.graph)) << fixture;
        memory::PlanOptions options;
        const auto plan = memory::planMemory(train, train.graph, options);
        EXPECT_FALSE(memory::validatePlan(plan.lifetimes, plan.buffers, plan.arenaBytes).has_value()) << fixture;
        EXPECT_GE(plan.arenaBytes, plan.lowerBoundBytes) << fixture;
        const auto training = autodiff::analyzeTrainingMemory(train, plan, options);
        EXPECT_GT(training.savedActivations.bytes, 0) << fixture << ": no forward tensor saved for backward";
        EXPECT_GT(training.phaseBoundaryStep, 0) << fixture;
    }
}

TEST(TrainingRealExports, OpWithoutGradientIsExitTwoNamingOpNodeAndParameter) {
    // LSTM and GroupNormalization have no rule: `grad` stops with exit 2, naming the op, the node
    // and a parameter whose gradient really passes through it (the LSTM's own weights, not the head's).
    struct Case {
        std::string file, message, parameterPrefix;
    };
    for (const Case& k : {Case{"lstm_tiny_static.onnx", "no gradient rule for op LSTM (node '/lstm/LSTM', on the path from '", "onnx::LSTM_"},
                          Case{"newops_opset23.onnx", "no gradient rule for op GroupNormalization (node 'group_norm', on the path from '",
                               "gn_"}}) {
        const auto r = test::runCli({"grad", kFixtures + "/" + k.file, "-o", test::tempDir("no_rule") + "/train.onnx"});
        EXPECT_EQ(r.exitCode, 2) << k.file << ": " << r.err;
        const size_t at = r.err.find(k.message);
        ASSERT_NE(at, std::string::npos) << r.err;
        EXPECT_EQ(r.err.compare(at + k.message.size(), k.parameterPrefix.size(), k.parameterPrefix), 0) << r.err;
    }
}
