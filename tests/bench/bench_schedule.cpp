// Scheduling time on the Swin fixture (2342 nodes, torch export), against a baseline in the same
// process: planning memory in exporter order (schedule, lifetimes, the `best` planner). The
// search and greedy cases report their time as `x_exporter_plan` (a ratio to that baseline).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "memory/MemoryPlan.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"
#include "schedule/GraphSchedule.h"

namespace {

using namespace passlens;
using Clock = std::chrono::steady_clock;

const ir::Model& swin() {
    static const ir::Model m = [] {
        auto model = onnxio::importModelFile(std::string(PASSLENS_FIXTURES_DIR) + "/swin_tiny_static.onnx");
        memory::completeShapesViaLiftedConstants(model);
        return model;
    }();
    return m;
}

double exporterPlanSeconds() {
    static const double seconds = [] {
        std::vector<double> t;
        for (int i = 0; i < 5; ++i) {
            const auto t0 = Clock::now();
            benchmark::DoNotOptimize(memory::planMemory(swin(), swin().graph, {}).arenaBytes);
            t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }();
    return seconds;
}

void BM_ScheduleBaselineExporterPlan(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(memory::planMemory(swin(), swin().graph, {}).arenaBytes);
    state.SetLabel(std::to_string(swin().graph.nodeOrder().size()) + " nodes");
}
BENCHMARK(BM_ScheduleBaselineExporterPlan)->Unit(benchmark::kMillisecond);

/// Problem, the named scheduler, then planning on its order: what `memplan --schedule NAME` adds.
void runSchedule(benchmark::State& state, const char* name) {
    const double baseline = exporterPlanSeconds();
    double total = 0;
    int64_t peak = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        const auto p = schedule::buildProblem(swin(), swin().graph);
        const auto r = schedule::scheduleGraph(swin(), swin().graph, p, name);
        peak = schedule::planWithSchedule(swin(), swin().graph, r.schedule, {}).arenaBytes;
        benchmark::DoNotOptimize(peak);
        total += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    state.counters["x_exporter_plan"] = total / static_cast<double>(state.iterations()) / baseline;
    state.counters["arena"] = static_cast<double>(peak);
}
void BM_ScheduleGreedySwin(benchmark::State& s) { runSchedule(s, "greedy"); }
void BM_ScheduleSearchSwin(benchmark::State& s) { runSchedule(s, "search"); }
BENCHMARK(BM_ScheduleGreedySwin)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ScheduleSearchSwin)->Unit(benchmark::kMillisecond);

}  // namespace
