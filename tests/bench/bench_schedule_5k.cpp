// The exact scheduling search on 5,000-node nets: it must finish (splitting at cut nodes, falling
// back to the best order found at the state cap), reported as a ratio to the greedy portfolio
// (lpmf/bfs/size-dfs) timed in the same process: `x_greedy` = search time ÷ greedy time, with the
// peaks of both and the search's fallback reason in the label.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>

#include "core/ScheduleNets.h"
#include "schedule/Problem.h"
#include "schedule/Schedulers.h"

namespace {

using namespace passlens;
using Clock = std::chrono::steady_clock;

const schedule::Problem& problem(int which) {
    static const schedule::Problem nas = [] {
        const ir::Model m = test::nasNet(500);  // 5,000 nodes
        return schedule::buildProblem(m, m.graph);
    }();
    static const schedule::Problem wired = [] {
        const ir::Model m = test::randWireNet(5000, 7);
        return schedule::buildProblem(m, m.graph);
    }();
    return which == 0 ? nas : wired;
}

double medianSeconds(const schedule::Problem& p, const char* name, schedule::ScheduleRun* last) {
    std::vector<double> t;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = Clock::now();
        *last = schedule::runScheduler(p, name);
        t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[1];
}

void BM_ScheduleSearch5k(benchmark::State& state) {
    const schedule::Problem& p = problem(static_cast<int>(state.range(0)));
    schedule::ScheduleRun greedy, search;
    const double greedySeconds = medianSeconds(p, "greedy", &greedy);
    double total = 0;
    for (auto _ : state) {
        const auto t0 = Clock::now();
        search = schedule::runScheduler(p, "search");
        benchmark::DoNotOptimize(search.peakBytes);
        total += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    state.counters["x_greedy"] = total / static_cast<double>(state.iterations()) / greedySeconds;
    state.counters["peak_search"] = static_cast<double>(search.peakBytes);
    state.counters["peak_greedy"] = static_cast<double>(greedy.peakBytes);
    state.SetLabel(std::string(state.range(0) == 0 ? "nas 500 cells" : "randwire") + ", " + std::to_string(p.nodes.size()) +
                   " nodes, " + std::to_string(search.segments) + " segments" +
                   (search.fallback.empty() ? std::string(", optimal") : ", fallback: " + search.fallback));
}
BENCHMARK(BM_ScheduleSearch5k)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
