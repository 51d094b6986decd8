// The engine at users' sizes (issue #14): import, optimize at each level, explain, memplan,
// domtree and convert on generated PyTorch-style transformers (~1k, ~8k, ~24k nodes) and a
// 50k-node chain. Each figure also appears as `vs_read`, its time over the time of reading the
// same file into memory (the baseline, measured in this process), and as nodes per second.
//   build/bin/passlens_bench --benchmark_filter=Scale
// ONNX Runtime side by side: tests/bench/scale_bench.sh (figures in docs/performance.md).
#include <benchmark/benchmark.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/Dominators.h"
#include "memory/MemoryPlan.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "pipeline/Explain.h"

using namespace passlens;

namespace {

const char* kScaleModels[] = {"bert_l12_scoped", "bert_l100_scoped", "bert_l320_scoped", "chain_50k"};

std::string scalePath(int64_t i) { return std::string(PASSLENS_GEN_MODELS_DIR) + "/" + kScaleModels[i] + ".onnx"; }

bool haveModel(benchmark::State& state) {
    if (std::ifstream(scalePath(state.range(0))).good()) return true;
    state.SkipWithError("generated model missing: run ctest -R gen_models (or passlens-genmodels)");
    return false;
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// Seconds to read the model's file into memory (best of three): the per-model baseline.
double readSeconds(int64_t i) {
    static std::map<int64_t, double> cache;
    if (auto it = cache.find(i); it != cache.end()) return it->second;
    double best = 1e9;
    for (int k = 0; k < 3; ++k) {
        auto t0 = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(readFile(scalePath(i)));
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return cache[i] = best;
}

/// The imported model, once per model (benchmarks that start from a model copy it).
const ir::Model& imported(int64_t i) {
    static std::map<int64_t, ir::Model> cache;
    if (auto it = cache.find(i); it == cache.end()) cache.emplace(i, onnxio::importModelFile(scalePath(i)));
    return cache.at(i);
}

/// Runs `work` per iteration, timing only `work` (setup returns its input), and reports nodes,
/// nodes per second and the ratio to the read baseline.
template <typename Setup, typename Work>
void timed(benchmark::State& state, Setup setup, Work work) {
    if (!haveModel(state)) return;
    const int64_t i = state.range(0);
    const double nodes = static_cast<double>(imported(i).graph.nodeCount());
    double seconds = 0;
    for (auto _ : state) {
        state.PauseTiming();
        auto input = setup();
        state.ResumeTiming();
        auto t0 = std::chrono::steady_clock::now();
        work(input);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const double perIteration = seconds / static_cast<double>(state.iterations());
    state.counters["nodes"] = nodes;
    state.counters["nodes_per_s"] = nodes / perIteration;
    state.counters["vs_read"] = perIteration / readSeconds(i);
    state.SetLabel(kScaleModels[i]);
}

auto copyOf(int64_t i) {
    return [i] { return imported(i); };
}

void BM_ScaleReadFileBaseline(benchmark::State& state) {
    timed(state, [] { return 0; }, [&](int) { benchmark::DoNotOptimize(readFile(scalePath(state.range(0)))); });
}

void BM_ScaleImport(benchmark::State& state) {
    timed(state, [] { return 0; }, [&](int) { benchmark::DoNotOptimize(onnxio::importModelFile(scalePath(state.range(0)))); });
}

void optimizeAt(benchmark::State& state, passes::Level level) {
    passes::PassManager pm;
    pm.addLevel(level);
    passes::PipelineOptions o;
    o.keepSnapshots = false;
    timed(state, copyOf(state.range(0)), [&](ir::Model& m) { benchmark::DoNotOptimize(pm.run(m, o)); });
}
void BM_ScaleOptimizeBasic(benchmark::State& state) { optimizeAt(state, passes::Level::Basic); }
void BM_ScaleOptimizeExtended(benchmark::State& state) { optimizeAt(state, passes::Level::Extended); }
void BM_ScaleOptimizeAll(benchmark::State& state) { optimizeAt(state, passes::Level::All); }

void BM_ScaleExplain(benchmark::State& state) {
    timed(state, copyOf(state.range(0)), [](ir::Model& m) { benchmark::DoNotOptimize(analysis::explainModel(m)); });
}

void BM_ScaleMemplanBest(benchmark::State& state) {
    memory::PlanOptions options;
    options.planner = "best";
    timed(state, copyOf(state.range(0)), [&](ir::Model& m) { benchmark::DoNotOptimize(memory::planMemory(m, m.graph, options)); });
}

void BM_ScaleDomtree(benchmark::State& state) {
    timed(state, copyOf(state.range(0)), [](ir::Model& m) { benchmark::DoNotOptimize(analysis::DominatorTree::build(m.graph)); });
}

void BM_ScaleConvert(benchmark::State& state) {
    timed(state, [] { return 0; }, [&](int) {
        benchmark::DoNotOptimize(onnxio::exportModelBytes(onnxio::importModelFile(scalePath(state.range(0)))));
    });
}

}  // namespace

// One iteration each at these sizes is already tens of milliseconds to seconds.
#define PASSLENS_SCALE_BENCH(fn) BENCHMARK(fn)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->MinTime(0.5)
PASSLENS_SCALE_BENCH(BM_ScaleReadFileBaseline);
PASSLENS_SCALE_BENCH(BM_ScaleImport);
PASSLENS_SCALE_BENCH(BM_ScaleOptimizeBasic);
PASSLENS_SCALE_BENCH(BM_ScaleOptimizeExtended);
PASSLENS_SCALE_BENCH(BM_ScaleOptimizeAll);
PASSLENS_SCALE_BENCH(BM_ScaleExplain);
PASSLENS_SCALE_BENCH(BM_ScaleMemplanBest);
PASSLENS_SCALE_BENCH(BM_ScaleDomtree);
PASSLENS_SCALE_BENCH(BM_ScaleConvert);
