#include "report/Memplan.h"

#include <sstream>

#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "memory/PlanJson.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"

namespace passlens::report {

std::optional<std::string> memplanOptionsProblem(const MemplanOptions& options) {
    bool known = false;
    for (const auto& n : memory::plannerNames()) known = known || n == options.planner;
    if (!known) return "unknown planner '" + options.planner + "' (naive, inplace, share, greedy-size, greedy-breadth, best)";
    const auto& sched = options.schedule;
    bool knownSchedule = sched == "model" || sched == "memory";
    for (const auto& n : schedule::schedulerNames()) knownSchedule = knownSchedule || n == sched;
    if (!knownSchedule) return "--schedule must be one of " + schedule::scheduleNamesText() + ", not '" + sched + "'";
    return std::nullopt;
}

std::vector<std::pair<std::string, int64_t>> pinUnpinnedDims(ir::Model& model,
                                                             const std::vector<std::pair<std::string, int64_t>>& pinnedDims) {
    std::vector<std::pair<std::string, int64_t>> assumed;
    for (const auto& d : eval::unpinnedDims(model, pinnedDims)) assumed.push_back({d, 1});
    if (!assumed.empty()) {
        onnxio::pinDims(model, assumed);
        onnxio::inferShapes(model);
    }
    return assumed;
}

MemplanReport planModelMemory(ir::Model& model, std::vector<std::pair<std::string, int64_t>> assumed,
                              const MemplanOptions& o) {
    if (auto problem = memplanOptionsProblem(o)) throwBadInput(*problem);
    MemplanReport r;
    memory::PlanOptions& options = r.planOptions;
    options.planner = o.planner;
    const std::string& sched = r.scheduleName = o.schedule;
    if (sched == "memory") options.schedule = memory::ScheduleKind::MemoryAware;
    options.parallelAware = o.parallelAware;
    r.assumed = std::move(assumed);
    // Sizes behind Constant-fed Reshape/Expand: infer on a Constant-lifted copy (types only).
    memory::completeShapesViaLiftedConstants(model);
    // The schedule: the chosen one, plus every scheduler for `best`/`search` (the comparison).
    const auto problem = schedule::buildProblem(model, model.graph);
    r.bound = schedule::anyOrderBound(problem);
    auto& runs = r.runs;
    const bool compareAll = sched == "best" || sched == "search";
    for (const auto& n : schedule::schedulerNames())
        if (n != sched && n != "best" && n != "search" && (compareAll || (n == "exporter" && sched != "model")))
            runs.push_back(schedule::scheduleGraph(model, model.graph, problem, n));
    if (sched == "best") {
        // `best` is the search (which starts from the lowest heuristic order): reuse that run.
        runs.push_back(schedule::scheduleGraph(model, model.graph, problem, "search"));
        runs.push_back(runs.back());
        runs.back().run.name = "best (search)";
    } else {
        runs.push_back(schedule::scheduleGraph(model, model.graph, problem, sched));
    }
    const auto& chosen = runs.back();
    r.plan = schedule::planWithSchedule(model, model.graph, chosen.schedule, options);
    for (auto& run : runs)
        run.arenaBytes = &run == &chosen ? r.plan.arenaBytes
                                         : memory::planLifetimes(memory::analyzeMemory(model, model.graph, run.schedule).lifetimes, options.planner).arenaBytes;
    r.bodies = memory::planSubgraphs(model, model.graph, options);
    // Training graphs: phases and saved-for-backward from the autodiff provenance.
    // The training summary maps steps to nodes in model or memory order, so under another
    // schedule it describes the model-order plan (the JSON says so).
    r.trainingOnOwnPlan = sched == "model" || sched == "memory";
    if (autodiff::isTrainingGraph(model.graph))
        r.training = autodiff::analyzeTrainingMemory(model, r.trainingOnOwnPlan ? r.plan : memory::planMemory(model, model.graph, options), options);
    return r;
}

nlohmann::ordered_json memplanToJson(const MemplanReport& r) {
    const auto& plan = r.plan;
    const auto& options = r.planOptions;
    const auto& chosen = r.chosen();
    const auto& bound = r.bound;
    auto j = memory::planToJson(plan);
    if (!r.assumed.empty()) {
        nlohmann::ordered_json a = nlohmann::ordered_json::object();
        for (const auto& [name, value] : r.assumed) a[name] = value;
        j["assumed_dims"] = std::move(a);
    }
    if (options.parallelAware)
        j["parallel_aware_cost_bytes"] = plan.arenaBytes - memory::planLifetimes(plan.lifetimes, options.planner).arenaBytes;
    auto subs = nlohmann::ordered_json::array();
    for (const auto& b : r.bodies) {
        nlohmann::ordered_json e;
        e["path"] = b.path;
        e["planner"] = b.plan.planner;
        e["steps"] = b.plan.scheduleNames.size();
        e["arena_bytes"] = b.plan.arenaBytes;
        e["lower_bound_bytes"] = b.plan.lowerBoundBytes;
        e["naive_bytes"] = b.plan.naiveBytes;
        e["unknown_size_values"] = b.plan.unknownSizeValues.size();
        subs.push_back(std::move(e));
    }
    j["subgraphs"] = std::move(subs);
    j["schedule_name"] = chosen.run.name;
    j["peak_live_bytes"] = chosen.peakLiveBytes;
    j["any_order_lower_bound_bytes"] = bound.bytes;
    j["optimal"] = chosen.peakLiveBytes <= bound.bytes || chosen.run.optimal;
    auto scheds = nlohmann::ordered_json::array();
    for (const auto& run : r.runs) {
        nlohmann::ordered_json e;
        e["name"] = run.run.name;
        e["peak_live_bytes"] = run.peakLiveBytes;
        e["arena_bytes"] = run.arenaBytes;
        e["any_order_lower_bound_bytes"] = bound.bytes;
        e["optimal"] = run.peakLiveBytes <= bound.bytes || run.run.optimal;
        e["ms"] = run.run.ms;
        if (run.run.name == "search" || run.run.name.rfind("best", 0) == 0) {
            e["states_explored"] = run.run.statesExplored;
            e["segments"] = run.run.segments;
            e["segments_searched"] = run.run.segmentsSearched;
            e["largest_segment_nodes"] = run.run.largestSegment;
            e["fallback"] = run.run.fallback.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(run.run.fallback);
        }
        scheds.push_back(std::move(e));
    }
    j["schedules"] = std::move(scheds);
    if (r.training && !r.trainingOnOwnPlan) j["training_schedule"] = "model";
    if (r.training) autodiff::addTrainingToJson(j, *r.training);
    return j;
}

std::string memplanToText(const MemplanReport& r) {
    std::ostringstream out;
    const auto& plan = r.plan;
    const auto& options = r.planOptions;
    const auto& chosen = r.chosen();
    std::vector<memory::MemoryPlan> others;
    // The comparison list is without the parallel-aware constraint (the cost line says what it adds).
    for (const auto& n : memory::plannerNames())
        others.push_back(memory::planLifetimes(plan.lifetimes, n));
    if (options.parallelAware) {
        auto free = memory::planLifetimes(plan.lifetimes, options.planner);
        out << "parallel-aware cost: " << (plan.arenaBytes - free.arenaBytes) << " bytes over "
            << free.planner << " without it\n";
    }
    out << memory::planToText(plan, others);
    out << "schedules (peak live bytes; any-order lower bound " << r.bound.bytes << "):\n";
    for (const auto& run : r.runs) {
        out << "  " << run.run.name << std::string(run.run.name.size() < 20 ? 20 - run.run.name.size() : 1, ' ') << run.peakLiveBytes
            << "  arena " << run.arenaBytes << "  " << run.run.ms << " ms";
        if (run.peakLiveBytes <= r.bound.bytes || run.run.optimal) out << "  optimal";
        if (run.run.statesExplored > 0) out << "  " << run.run.statesExplored << " states";
        if (!run.run.fallback.empty()) out << "  (" << run.run.fallback << ")";
        out << (&run == &chosen ? "  <- used\n" : "\n");
    }
    if (r.training) out << autodiff::trainingToText(*r.training);
    if (!r.bodies.empty()) {
        out << "subgraph bodies (each planned on its own; the top level sees one step per If/Loop):\n";
        for (const auto& b : r.bodies)
            out << "  " << b.path << ": " << b.plan.scheduleNames.size() << " steps, naive " << b.plan.naiveBytes
                << ", lower bound " << b.plan.lowerBoundBytes << ", arena " << b.plan.arenaBytes << " ("
                << b.plan.planner << "), unknown size " << b.plan.unknownSizeValues.size() << "\n";
    }
    return out.str();
}

}  // namespace passlens::report
