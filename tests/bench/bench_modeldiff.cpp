// Model diff at users' sizes: a ~25k-node transformer-like model against its renamed, reordered
// copy (and against a copy with edits), next to importing the same model from memory (baseline,
// same process). Target: the diff of two 25k-node models under 2 s.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "core/ModelScramble.h"
#include "diff/ModelDiff.h"
#include "examples/Builder.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

/// PyTorch-export-like layers: MatMul+Add, a Shape→Gather→Unsqueeze→Concat→Reshape chain per layer
/// (interchangeable across nothing but its consumer), Relu, residual Add: ~12 nodes per layer.
Model syntheticModel(int layers) {
    GraphBuilder b("bench_diff");
    ValueId x = b.input("x", DataType::Float, {4, 16});
    const ValueId zero = b.ints("zero", {0}), minusOne = b.ints("minus_one", {-1});
    for (int l = 0; l < layers; ++l) {
        const std::string p = "layer" + std::to_string(l) + "/";
        auto w = b.constant(p + "w", randomFloats({16, 16}, 2 * l + 1));
        auto bias = b.constant(p + "b", randomFloats({16}, 2 * l + 2));
        auto mm = b.op("MatMul", {x, w}, {}, p + "MatMul");
        auto add = b.op("Add", {mm, bias}, {}, p + "Add");
        auto shape = b.op("Shape", {add}, {}, p + "Shape");
        auto first = b.op("Gather", {shape, zero}, {Attribute::makeInt("axis", 0)}, p + "Gather");
        auto dims = b.op("Concat", {first, minusOne}, {Attribute::makeInt("axis", 0)}, p + "Concat");
        auto reshaped = b.op("Reshape", {add, dims}, {}, p + "Reshape");
        auto act = b.op("Relu", {reshaped}, {}, p + "Relu");
        auto shape2 = b.op("Shape", {act}, {}, p + "Shape2");
        auto back = b.op("Reshape", {act, shape2}, {}, p + "Reshape2");
        auto sig = b.op("Sigmoid", {back}, {}, p + "Sigmoid");
        auto gated = b.op("Mul", {back, sig}, {}, p + "Mul");
        x = b.op("Add", {gated, x}, {}, p + "Residual");
    }
    b.output(x);
    return b.finish();
}

const Model& largeModel() {
    static const Model m = [] {
#ifdef PASSLENS_GEN_MODELS_DIR
        const std::string gen = std::string(PASSLENS_GEN_MODELS_DIR) + "/bert_l320_scoped.onnx";
        if (std::filesystem::exists(gen)) return onnxio::importModelFile(gen);
#endif
        return syntheticModel(2080);  // 24,960 nodes
    }();
    return m;
}

const Model& renamedCopy() {
    static const Model m = onnxio::importModelBytes(onnxio::exportModelBytes(test::scrambleModel(largeModel(), 3).model), ".");
    return m;
}

void BM_DiffBaselineImport(benchmark::State& state) {
    const std::string bytes = onnxio::exportModelBytes(renamedCopy());
    for (auto _ : state) benchmark::DoNotOptimize(onnxio::importModelBytes(bytes, "."));
    state.SetLabel(std::to_string(largeModel().graph.nodeCount()) + " nodes, import from memory");
}

void BM_DiffRenamedCopy(benchmark::State& state) {
    const Model& a = largeModel();
    const Model& b = renamedCopy();
    for (auto _ : state) benchmark::DoNotOptimize(diff::compareModels(a, b));
    const auto d = diff::compareModels(a, b);
    state.SetLabel(std::to_string(a.graph.nodeCount()) + " nodes, " + std::to_string(d.summary.same) + " same");
}

void BM_DiffNamesOnly(benchmark::State& state) {
    const Model& a = largeModel();
    diff::DiffOptions names;
    names.namesOnly = true;
    for (auto _ : state) benchmark::DoNotOptimize(diff::compareModels(a, a, names));
    state.SetLabel("same model, names only");
}

}  // namespace

BENCHMARK(BM_DiffBaselineImport)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DiffRenamedCopy)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DiffNamesOnly)->Unit(benchmark::kMillisecond)->Iterations(3);
