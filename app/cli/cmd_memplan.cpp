#include <ostream>

#include "cli/Command.h"
#include "onnx/Import.h"
#include "plot/SvgChart.h"
#include "report/Charts.h"
#include "report/Memplan.h"
#include "schedule/GraphSchedule.h"

namespace passlens::cli {

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
        if (auto svg = args.option("--svg")) plot::saveSvg(*svg, report::scheduleChart(model, model.graph, r.runs, r.bound.bytes));
        if (args.flag("--json")) out << report::memplanToJson(r).dump(1) << "\n";
        else out << report::memplanToText(r);
        return 0;
    }});

}  // namespace passlens::cli
