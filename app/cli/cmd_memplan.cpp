#include <ostream>

#include "cli/Command.h"
#include "onnx/Import.h"
#include "plot/Scale.h"
#include "plot/SvgChart.h"
#include "report/Memplan.h"
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
        // The plan, the schedule comparison and the training phases: core/report/Memplan.
        report::MemplanOptions options;
        options.planner = args.option("--planner").value_or("best");
        options.schedule = args.option("--schedule").value_or("model");
        options.parallelAware = args.flag("--parallel-aware");
        if (auto problem = report::memplanOptionsProblem(options)) throw UsageError{*problem};
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), io);
        // A plan needs sizes: input dims left symbolic are planned at 1, and the note says so.
        auto assumed = report::pinUnpinnedDims(model, io.pinnedDims);
        for (const auto& [name, value] : assumed)
            err << "note: symbolic dim '" << name << "' is not pinned with --dim; planning at " << name << "=" << value << "\n";
        const auto r = report::planModelMemory(model, std::move(assumed), options);
        if (auto svg = args.option("--svg")) writeScheduleChart(*svg, model, r.runs, r.bound.bytes);
        if (args.flag("--json")) out << report::memplanToJson(r).dump(1) << "\n";
        else out << report::memplanToText(r);
        return 0;
    }});

}  // namespace passlens::cli
