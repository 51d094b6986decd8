#include <optional>
#include <ostream>

#include "autodiff/TrainingMemory.h"
#include "cli/Command.h"
#include "eval/Interpreter.h"
#include "memory/MemoryPlan.h"
#include "memory/PlanJson.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "plot/Scale.h"
#include "plot/SvgChart.h"
#include "schedule/GraphSchedule.h"

namespace passlens::cli {

namespace {

/// Live bytes per step of the exporter order and the chosen schedule, with the any-order bound
/// and each peak marked (docs/scheduling.md).
void writeScheduleChart(const std::string& path, const ir::Model& model, const std::vector<schedule::GraphScheduleRun>& runs,
                        int64_t bound) {
    plot::SvgChart c;
    c.title = "live bytes per step";
    c.xLabel = "step";
    c.yLabel = "live bytes";
    c.yBytes = true;
    const char* colors[] = {"#7f7f7f", "#1f77b4"};
    std::vector<const schedule::GraphScheduleRun*> shown;
    for (const auto& r : runs)
        if (r.run.name == "exporter") shown.push_back(&r);
    if (shown.empty() || shown.back() != &runs.back()) shown.push_back(&runs.back());
    for (size_t i = 0; i < shown.size(); ++i) {
        const auto live = memory::analyzeMemory(model, model.graph, shown[i]->schedule).liveBytesPerStep;
        plot::SvgSeries s;
        s.name = shown[i]->run.name + " (peak " + plot::formatBytes(static_cast<double>(shown[i]->peakLiveBytes)) + ")";
        s.color = colors[std::min<size_t>(i, 1)];
        s.step = true;
        for (size_t k = 0; k < live.size(); ++k) s.points.emplace_back(static_cast<double>(k), static_cast<double>(live[k]));
        if (!live.empty()) {
            const size_t at = static_cast<size_t>(std::max_element(live.begin(), live.end()) - live.begin());
            c.markers.push_back({"peak", s.color, static_cast<double>(at) + 0.5, static_cast<double>(live[at])});
        }
        c.series.push_back(std::move(s));
    }
    c.lines.push_back({"any-order lower bound " + plot::formatBytes(static_cast<double>(bound)), "#d62728", static_cast<double>(bound)});
    plot::saveSvg(path, c);
}

}  // namespace

REGISTER_COMMAND({
    "memplan", "memplan MODEL [--planner NAME] [--parallel-aware] [--schedule model|memory|exporter|dfs|lpmf|bfs|size-dfs|greedy|search|best] [--json] [--svg FILE]",
    "Memory plan: static/dynamic bytes, lifetimes, arena offsets per planner vs the lower bound.",
    {"--planner", "--schedule", "--svg"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--planner", "--parallel-aware", "--schedule", "--json", "--svg"});
        memory::PlanOptions options;
        options.planner = args.option("--planner").value_or("best");
        bool known = false;
        for (const auto& n : memory::plannerNames()) known = known || n == options.planner;
        if (!known) throw UsageError{"unknown planner '" + options.planner + "' (naive, inplace, share, greedy-size, greedy-breadth, best)"};
        auto sched = args.option("--schedule").value_or("model");
        bool knownSchedule = sched == "model" || sched == "memory";
        for (const auto& n : schedule::schedulerNames()) knownSchedule = knownSchedule || n == sched;
        if (!knownSchedule) throw UsageError{"--schedule must be one of " + schedule::scheduleNamesText() + ", not '" + sched + "'"};
        if (sched == "memory") options.schedule = memory::ScheduleKind::MemoryAware;
        options.parallelAware = args.flag("--parallel-aware");
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), io);
        // A plan needs sizes: input dims left symbolic are planned at 1, and the note says so.
        std::vector<std::pair<std::string, int64_t>> assumed;
        for (const auto& d : eval::unpinnedDims(model, io.pinnedDims)) assumed.push_back({d, 1});
        if (!assumed.empty()) {
            onnxio::pinDims(model, assumed);
            onnxio::inferShapes(model);
            for (const auto& [name, value] : assumed)
                err << "note: symbolic dim '" << name << "' is not pinned with --dim; planning at " << name << "=" << value << "\n";
        }
        // Sizes behind Constant-fed Reshape/Expand: infer on a Constant-lifted copy (types only).
        memory::completeShapesViaLiftedConstants(model);
        // The schedule: the chosen one, plus every scheduler for `best`/`search` (the comparison).
        const auto problem = schedule::buildProblem(model, model.graph);
        const auto bound = schedule::anyOrderBound(problem);
        std::vector<schedule::GraphScheduleRun> runs;
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
        auto plan = schedule::planWithSchedule(model, model.graph, chosen.schedule, options);
        for (auto& r : runs)
            r.arenaBytes = &r == &chosen ? plan.arenaBytes
                                         : memory::planLifetimes(memory::analyzeMemory(model, model.graph, r.schedule).lifetimes, options.planner).arenaBytes;
        auto bodies = memory::planSubgraphs(model, model.graph, options);
        // Training graphs: phases and saved-for-backward from the autodiff provenance.
        std::optional<autodiff::TrainingMemory> training;
        // The training summary maps steps to nodes in model or memory order, so under another
        // schedule it describes the model-order plan (the JSON says so).
        const bool trainingOnOwnPlan = sched == "model" || sched == "memory";
        if (autodiff::isTrainingGraph(model.graph))
            training = autodiff::analyzeTrainingMemory(model, trainingOnOwnPlan ? plan : memory::planMemory(model, model.graph, options), options);
        if (auto svg = args.option("--svg")) writeScheduleChart(*svg, model, runs, bound.bytes);
        if (args.flag("--json")) {
            auto j = memory::planToJson(plan);
            if (!assumed.empty()) {
                nlohmann::ordered_json a = nlohmann::ordered_json::object();
                for (const auto& [name, value] : assumed) a[name] = value;
                j["assumed_dims"] = std::move(a);
            }
            if (options.parallelAware)
                j["parallel_aware_cost_bytes"] = plan.arenaBytes - memory::planLifetimes(plan.lifetimes, options.planner).arenaBytes;
            auto subs = nlohmann::ordered_json::array();
            for (const auto& b : bodies) {
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
            for (const auto& r : runs) {
                nlohmann::ordered_json e;
                e["name"] = r.run.name;
                e["peak_live_bytes"] = r.peakLiveBytes;
                e["arena_bytes"] = r.arenaBytes;
                e["any_order_lower_bound_bytes"] = bound.bytes;
                e["optimal"] = r.peakLiveBytes <= bound.bytes || r.run.optimal;
                e["ms"] = r.run.ms;
                if (r.run.name == "search" || r.run.name.rfind("best", 0) == 0) {
                    e["states_explored"] = r.run.statesExplored;
                    e["segments"] = r.run.segments;
                    e["segments_searched"] = r.run.segmentsSearched;
                    e["largest_segment_nodes"] = r.run.largestSegment;
                    e["fallback"] = r.run.fallback.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(r.run.fallback);
                }
                scheds.push_back(std::move(e));
            }
            j["schedules"] = std::move(scheds);
            if (training && !trainingOnOwnPlan) j["training_schedule"] = "model";
            if (training) autodiff::addTrainingToJson(j, *training);
            out << j.dump(1) << "\n";
        } else {
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
            out << "schedules (peak live bytes; any-order lower bound " << bound.bytes << "):\n";
            for (const auto& r : runs) {
                out << "  " << r.run.name << std::string(r.run.name.size() < 20 ? 20 - r.run.name.size() : 1, ' ') << r.peakLiveBytes
                    << "  arena " << r.arenaBytes << "  " << r.run.ms << " ms";
                if (r.peakLiveBytes <= bound.bytes || r.run.optimal) out << "  optimal";
                if (r.run.statesExplored > 0) out << "  " << r.run.statesExplored << " states";
                if (!r.run.fallback.empty()) out << "  (" << r.run.fallback << ")";
                out << (&r == &chosen ? "  <- used\n" : "\n");
            }
            if (training) out << autodiff::trainingToText(*training);
            if (!bodies.empty()) {
                out << "subgraph bodies (each planned on its own; the top level sees one step per If/Loop):\n";
                for (const auto& b : bodies)
                    out << "  " << b.path << ": " << b.plan.scheduleNames.size() << " steps, naive " << b.plan.naiveBytes
                        << ", lower bound " << b.plan.lowerBoundBytes << ", arena " << b.plan.arenaBytes << " ("
                        << b.plan.planner << "), unknown size " << b.plan.unknownSizeValues.size() << "\n";
            }
        }
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
