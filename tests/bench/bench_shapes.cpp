// The symbolic shape engine against libonnx's shape inference round trip (export, infer, copy the
// types back) in the same process, on the generated BERTs (up to 24k nodes) and the dynamic Swin
// fixture. Each engine case reports `x_libonnx`: its time over the libonnx baseline on the same
// model (issue #27 asks the 23k-node BERT to take under 1 s; the label prints the seconds).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "shape/ShapeEngine.h"

namespace {

using namespace passlens;
using Clock = std::chrono::steady_clock;

const char* kShapeModels[] = {"bert_l12_scoped", "bert_l320_scoped", "swin_tiny_dynamic"};

std::string pathOf(const std::string& name) {
    if (name.rfind("swin", 0) == 0) return std::string(PASSLENS_FIXTURES_DIR) + "/" + name + ".onnx";
    return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + name + ".onnx";
}

const ir::Model& model(const std::string& name) {
    static std::map<std::string, ir::Model> cache;
    auto it = cache.find(name);
    if (it == cache.end()) {
        onnxio::ImportOptions o;
        o.inferShapes = false;  // both sides start from the file's own types
        it = cache.emplace(name, onnxio::importModelFile(pathOf(name), o)).first;
    }
    return it->second;
}

double median(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/// libonnx's round trip on a copy, median of three: the baseline.
double libonnxSeconds(const std::string& name) {
    static std::map<std::string, double> cache;
    if (auto it = cache.find(name); it != cache.end()) return it->second;
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) {
        ir::Model m = model(name);
        const auto t0 = Clock::now();
        benchmark::DoNotOptimize(onnxio::inferShapes(m, /*symbolic=*/false).size());
        t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return cache[name] = median(t);
}

void BM_ShapesLibonnxBaseline(benchmark::State& state) {
    const std::string name = kShapeModels[state.range(0)];
    for (auto _ : state) {
        state.PauseTiming();
        ir::Model m = model(name);
        state.ResumeTiming();
        benchmark::DoNotOptimize(onnxio::inferShapes(m, false).size());
    }
    state.SetLabel(name + " " + std::to_string(model(name).graph.nodeOrder().size()) + " nodes");
}
BENCHMARK(BM_ShapesLibonnxBaseline)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

/// The engine alone (analysis of the graph as libonnx left it), what import adds after libonnx.
void BM_ShapesEngine(benchmark::State& state) {
    const std::string name = kShapeModels[state.range(0)];
    ir::Model m = model(name);
    onnxio::inferShapes(m, false);
    const double baseline = libonnxSeconds(name);
    double total = 0;
    int64_t runs = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        benchmark::DoNotOptimize(shape::analyzeShapes(m.graph, &m).values.size());
        total += std::chrono::duration<double>(Clock::now() - t0).count();
        ++runs;
    }
    const double seconds = total / double(runs);
    state.counters["x_libonnx"] = seconds / baseline;
    state.SetLabel(name + " " + std::to_string(seconds) + " s");
}
BENCHMARK(BM_ShapesEngine)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace
