#pragma once
// Schedulers on a graph snapshot: every figure a schedule reports (peak live bytes, arena) comes
// from the memory module run on that order, the same counting the planners use.
#include <string>
#include <vector>

#include "memory/MemoryPlan.h"
#include "schedule/Schedulers.h"

namespace passlens::schedule {

struct GraphScheduleRun {
    ScheduleRun run;              ///< order, search statistics, time
    memory::Schedule schedule;    ///< the order as graph nodes
    int64_t peakLiveBytes = 0;    ///< memory::analyzeMemory's peak-live bound of this order
    int64_t arenaBytes = -1;      ///< the planner's arena on this order (-1: not planned)
};

/// Runs a named scheduler on a graph. Besides schedulerNames(), takes the memory module's own
/// names: "model" (= exporter) and "memory" (its greedy memory-aware order).
GraphScheduleRun scheduleGraph(const ir::Model& m, const ir::Graph& g, const Problem& p, const std::string& name,
                               const SearchOptions& options = {});

/// Names scheduleGraph accepts, for usage messages.
std::string scheduleNamesText();

/// memory::planMemory with a given schedule: lifetimes, the named planner's arena (validated).
memory::MemoryPlan planWithSchedule(const ir::Model& m, const ir::Graph& g, const memory::Schedule& s,
                                    const memory::PlanOptions& options);

}  // namespace passlens::schedule
