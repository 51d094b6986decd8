#include <optional>
#include <ostream>

#include "autodiff/TrainingMemory.h"
#include "cli/Command.h"
#include "memory/MemoryPlan.h"
#include "memory/PlanJson.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "memplan", "memplan MODEL [--planner NAME] [--parallel-aware] [--schedule model|memory] [--json]",
    "Memory plan: static/dynamic bytes, lifetimes, arena offsets per planner vs the lower bound.",
    {"--planner", "--schedule"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--planner", "--parallel-aware", "--schedule", "--json"});
        memory::PlanOptions options;
        options.planner = args.option("--planner").value_or("best");
        bool known = false;
        for (const auto& n : memory::plannerNames()) known = known || n == options.planner;
        if (!known) throw UsageError{"unknown planner '" + options.planner + "' (naive, inplace, share, greedy-size, greedy-breadth, best)"};
        auto sched = args.option("--schedule").value_or("model");
        if (sched == "memory") options.schedule = memory::ScheduleKind::MemoryAware;
        else if (sched != "model") throw UsageError{"--schedule must be 'model' or 'memory', not '" + sched + "'"};
        options.parallelAware = args.flag("--parallel-aware");
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), io);
        // Sizes behind Constant-fed Reshape/Expand: infer on a Constant-lifted copy (types only).
        memory::completeShapesViaLiftedConstants(model);
        auto plan = memory::planMemory(model, model.graph, options);
        auto bodies = memory::planSubgraphs(model, model.graph, options);
        // Training graphs: phases and saved-for-backward from the autodiff provenance.
        std::optional<autodiff::TrainingMemory> training;
        if (autodiff::isTrainingGraph(model.graph)) training = autodiff::analyzeTrainingMemory(model, plan, options);
        if (args.flag("--json")) {
            auto j = memory::planToJson(plan);
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
