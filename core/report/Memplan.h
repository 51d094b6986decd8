#pragma once
// `passlens-cli memplan` and the Python module's Model.memplan(): the memory plan of a model under
// a chosen schedule and planner, every scheduler's peak for comparison, the subgraph bodies, and
// the training phases of a training graph. Computed once here; the CLI prints it as text or JSON,
// Python reads the JSON.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/TrainingMemory.h"
#include "ir/Model.h"
#include "memory/MemoryPlan.h"
#include "schedule/GraphSchedule.h"
#include "schedule/Schedulers.h"

namespace passlens::report {

struct MemplanOptions {
    std::string planner = "best";     ///< memory::plannerNames()
    std::string schedule = "model";   ///< model | memory | a scheduler name (schedule::schedulerNames())
    bool parallelAware = false;
};

/// The usage message for an unknown planner or schedule ("unknown planner 'x' (naive, ...)"),
/// nullopt when both are known.
std::optional<std::string> memplanOptionsProblem(const MemplanOptions& options);

struct MemplanReport {
    memory::PlanOptions planOptions;
    std::string scheduleName;                               ///< as asked
    /// Input dims left symbolic, planned at 1 (the caller tells the reader).
    std::vector<std::pair<std::string, int64_t>> assumed;
    schedule::AnyOrderBound bound;
    std::vector<schedule::GraphScheduleRun> runs;           ///< the comparison; the last one is used
    memory::MemoryPlan plan;                                ///< under the used schedule
    std::vector<memory::SubgraphPlan> bodies;
    std::optional<autodiff::TrainingMemory> training;
    bool trainingOnOwnPlan = true;
    const schedule::GraphScheduleRun& chosen() const { return runs.back(); }
};

/// A plan needs sizes: pins the input dims `pinnedDims` leaves symbolic at 1 and re-infers shapes.
/// Returns them (the caller tells the reader: "planning at NAME=1").
std::vector<std::pair<std::string, int64_t>> pinUnpinnedDims(ir::Model& model,
                                                             const std::vector<std::pair<std::string, int64_t>>& pinnedDims);

/// Plans `model` (after pinUnpinnedDims; `assumed` is what it returned). Completes shapes behind
/// Constant-fed Reshape/Expand in place. Throws Error(BadInput) for unknown names.
MemplanReport planModelMemory(ir::Model& model, std::vector<std::pair<std::string, int64_t>> assumed,
                              const MemplanOptions& options);

/// `passlens-cli memplan --json` (without the trailing newline; dump(1) of this object).
nlohmann::ordered_json memplanToJson(const MemplanReport& r);
/// `passlens-cli memplan`'s text.
std::string memplanToText(const MemplanReport& r);

}  // namespace passlens::report
