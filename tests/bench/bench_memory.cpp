// Memory planning time on the largest real model (PP-OCRv4 rec, 765 nodes), against a baseline in
// the same process: the naive planner on the same lifetime set (a single pass over the tensors).
#include <benchmark/benchmark.h>

#include "memory/MemoryPlan.h"
#include "onnx/Import.h"

namespace {

using namespace passlens;

const ir::Model& recModel() {
    static const ir::Model m = [] {
        onnxio::ImportOptions io;
        io.pinnedDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
        return onnxio::importModelFile(std::string(PASSLENS_MODELS_DIR) + "/ch_PP-OCRv4_rec_infer.onnx", io);
    }();
    return m;
}

const std::vector<memory::TensorLifetime>& recLifetimes() {
    static const auto ts = [] {
        const auto& m = recModel();
        return memory::analyzeMemory(m, m.graph, memory::makeSchedule(m.graph, memory::ScheduleKind::Model)).lifetimes;
    }();
    return ts;
}

void runPlanner(benchmark::State& state, const char* planner) {
    const auto& ts = recLifetimes();
    for (auto _ : state) benchmark::DoNotOptimize(memory::planLifetimes(ts, planner).arenaBytes);
    state.SetLabel(std::to_string(ts.size()) + " tensors");
}

void BM_MemplanBaselineNaive(benchmark::State& s) { runPlanner(s, "naive"); }
void BM_MemplanShare(benchmark::State& s) { runPlanner(s, "share"); }
void BM_MemplanGreedySize(benchmark::State& s) { runPlanner(s, "greedy-size"); }
void BM_MemplanGreedyBreadth(benchmark::State& s) { runPlanner(s, "greedy-breadth"); }
void BM_MemplanBest(benchmark::State& s) { runPlanner(s, "best"); }
BENCHMARK(BM_MemplanBaselineNaive)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemplanShare)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemplanGreedySize)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemplanGreedyBreadth)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MemplanBest)->Unit(benchmark::kMicrosecond);

/// The whole pipeline on a graph snapshot: schedule, sizes, lifetimes, best plan.
void BM_MemplanWholeGraphBest(benchmark::State& state) {
    const auto& m = recModel();
    for (auto _ : state) benchmark::DoNotOptimize(memory::planMemory(m, m.graph, {}).arenaBytes);
}
BENCHMARK(BM_MemplanWholeGraphBest)->Unit(benchmark::kMillisecond);

void BM_MemplanWholeGraphParallelAwareMemorySchedule(benchmark::State& state) {
    const auto& m = recModel();
    memory::PlanOptions o;
    o.parallelAware = true;
    o.schedule = memory::ScheduleKind::MemoryAware;
    for (auto _ : state) benchmark::DoNotOptimize(memory::planMemory(m, m.graph, o).arenaBytes);
}
BENCHMARK(BM_MemplanWholeGraphParallelAwareMemorySchedule)->Unit(benchmark::kMillisecond);

}  // namespace
