#include "schedule/GraphSchedule.h"

#include <chrono>
#include <unordered_map>

#include "ir/Error.h"

namespace passlens::schedule {

std::string scheduleNamesText() {
    std::string s;
    for (const auto& n : schedulerNames()) s += n + ", ";
    return s + "model (= exporter), memory";
}

GraphScheduleRun scheduleGraph(const ir::Model& m, const ir::Graph& g, const Problem& p, const std::string& name,
                               const SearchOptions& options) {
    GraphScheduleRun r;
    if (name == "memory") {
        const auto t0 = std::chrono::steady_clock::now();
        r.schedule = memory::makeSchedule(g, memory::ScheduleKind::MemoryAware);
        std::unordered_map<ir::NodeId, int> index;
        for (size_t i = 0; i < p.nodes.size(); ++i) index[p.nodes[i]] = static_cast<int>(i);
        r.run.name = "memory";
        for (ir::NodeId n : r.schedule.order) r.run.order.push_back(index.at(n));
        r.run.peakBytes = simulatePeak(p, r.run.order);
        r.run.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } else {
        r.run = runScheduler(p, name == "model" ? "exporter" : name, options);
        r.schedule = toSchedule(p, r.run.order);
    }
    r.peakLiveBytes = memory::analyzeMemory(m, g, r.schedule).lowerBoundBytes;
    return r;
}

memory::MemoryPlan planWithSchedule(const ir::Model& m, const ir::Graph& g, const memory::Schedule& s,
                                    const memory::PlanOptions& options) {
    memory::MemoryPlan plan = memory::analyzeMemory(m, g, s);
    memory::Reachability reach;
    memory::PlanConstraints c;
    if (options.parallelAware) {
        reach = memory::computeReachability(g, s);
        c.parallelAware = &reach;
    }
    memory::MemoryPlan arena = memory::planLifetimes(plan.lifetimes, options.planner, c);
    plan.planner = arena.planner;
    plan.arenaBytes = arena.arenaBytes;
    plan.buffers = std::move(arena.buffers);
    plan.parallelAware = options.parallelAware;
    return plan;
}

}  // namespace passlens::schedule
