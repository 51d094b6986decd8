// Schedulers on graphs: a NAS-style net built in code where the search beats exporter order, the
// committed torch exports (best never above exporter order, peaks counted as the planners count,
// timing printed), and the memplan CLI.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "TestSupport.h"
#include "examples/Builder.h"
#include "memory/MemoryPlan.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"
#include "schedule/GraphSchedule.h"
#include "ScheduleNets.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

std::string fixture(const std::string& name) { return std::string(PASSLENS_FIXTURES_DIR) + "/" + name; }

TEST(ScheduleModels, SearchBeatsExporterOrderOnNasCells) {
    const Model m = test::nasNet(3);
    const auto p = schedule::buildProblem(m, m.graph);
    const auto exporter = schedule::scheduleGraph(m, m.graph, p, "exporter");
    const auto search = schedule::scheduleGraph(m, m.graph, p, "search");
    const auto bound = schedule::anyOrderBound(p);
    // Exporter order, cells 2 and 3 (the first cell's input is a graph input, not in the arena):
    // the cell input and four 32 KiB expansions live at once.
    EXPECT_EQ(exporter.peakLiveBytes, 8192 + 4 * 32768);
    // One branch at a time: at the last expansion the cell input, three 4 KiB results and one
    // expansion are live, in every order.
    EXPECT_EQ(search.peakLiveBytes, 8192 + 3 * 4096 + 32768);
    EXPECT_TRUE(search.run.optimal) << search.run.fallback;
    EXPECT_GT(search.run.segments, 1);
    EXPECT_LE(bound.bytes, search.peakLiveBytes);
    for (const auto& name : {"dfs", "lpmf", "bfs", "size-dfs", "greedy"})
        EXPECT_LE(search.peakLiveBytes, schedule::scheduleGraph(m, m.graph, p, name).peakLiveBytes) << name;
    // The planners on the searched order: the arena follows the lower peak.
    const auto plan = schedule::planWithSchedule(m, m.graph, search.schedule, {});
    EXPECT_EQ(plan.lowerBoundBytes, search.peakLiveBytes);
    EXPECT_LT(plan.arenaBytes, memory::planMemory(m, m.graph, {}).arenaBytes);
}

struct FixtureRow {
    std::string model;
    std::map<std::string, int64_t> peak;
    int64_t bound = 0;
};

TEST(ScheduleModels, RealExportsBestNeverAboveExporterAndPeaksMatchPlanners) {
    const std::vector<std::string> files = {"vit_tiny_static.onnx", "swin_tiny_static.onnx", "resnet_tiny_static.onnx",
                                            "gpt_tiny_static.onnx", "transformer_encoder_static.onnx"};
    std::printf("%-34s %6s %10s %10s %10s %10s %10s %10s  %s\n", "model", "nodes", "exporter", "dfs", "greedy", "search",
                "bound", "search ms", "search");
    for (const auto& file : files) {
        Model m = onnxio::importModelFile(fixture(file));
        memory::completeShapesViaLiftedConstants(m);
        const auto p = schedule::buildProblem(m, m.graph);
        const auto bound = schedule::anyOrderBound(p);
        std::map<std::string, schedule::GraphScheduleRun> runs;
        for (const auto& name : schedule::schedulerNames()) {
            auto r = schedule::scheduleGraph(m, m.graph, p, name);
            ASSERT_TRUE(schedule::isTopological(p, r.run.order)) << file << " " << name;
            // The simulator counts exactly as the planners' peak-live bound does.
            EXPECT_EQ(r.run.peakBytes, r.peakLiveBytes) << file << " " << name;
            EXPECT_LE(bound.bytes, r.peakLiveBytes) << file << " " << name;
            runs[name] = std::move(r);
        }
        const int64_t exporterPeak = runs["exporter"].peakLiveBytes;
        EXPECT_EQ(exporterPeak, memory::planMemory(m, m.graph, {}).lowerBoundBytes) << file;
        EXPECT_LE(runs["best"].peakLiveBytes, exporterPeak) << file;
        for (const auto& name : {"exporter", "dfs", "lpmf", "bfs", "size-dfs", "greedy"})
            EXPECT_LE(runs["search"].peakLiveBytes, runs[name].peakLiveBytes) << file << " " << name;
        const auto& s = runs["search"].run;
        std::printf("%-34s %6zu %10lld %10lld %10lld %10lld %10lld %10.1f  %s, %d segments (largest %zu, %d searched), %lld states%s%s\n",
                    file.c_str(), p.size(), (long long)exporterPeak, (long long)runs["dfs"].peakLiveBytes,
                    (long long)runs["greedy"].peakLiveBytes, (long long)runs["search"].peakLiveBytes, (long long)bound.bytes, s.ms,
                    s.optimal ? "optimal" : "not proven", s.segments, s.largestSegment, s.segmentsSearched,
                    (long long)s.statesExplored, s.fallback.empty() ? "" : "; ", s.fallback.c_str());
    }
}

TEST(ScheduleModels, CliScheduleBestJson) {
    const auto r = test::runCli({"memplan", fixture("vit_tiny_static.onnx"), "--schedule", "best", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    // Existing fields stay; the plan is on the chosen order.
    for (const char* key : {"planner", "arena_bytes", "lower_bound_bytes", "naive_bytes", "schedule", "buffers", "subgraphs"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j["peak_live_bytes"], j["lower_bound_bytes"]);
    EXPECT_GE(j["arena_bytes"].get<int64_t>(), j["peak_live_bytes"].get<int64_t>());
    EXPECT_LE(j["any_order_lower_bound_bytes"].get<int64_t>(), j["peak_live_bytes"].get<int64_t>());
    std::map<std::string, nlohmann::json> byName;
    for (const auto& s : j["schedules"]) byName[s["name"].get<std::string>()] = s;
    for (const char* name : {"exporter", "dfs", "lpmf", "bfs", "size-dfs", "search", "best (search)"})
        ASSERT_TRUE(byName.count(name)) << name;
    EXPECT_EQ(byName["best (search)"]["peak_live_bytes"], j["peak_live_bytes"]);
    for (const auto& [name, s] : byName) {
        EXPECT_LE(j["peak_live_bytes"].get<int64_t>(), s["peak_live_bytes"].get<int64_t>()) << name;
        EXPECT_TRUE(s.contains("ms") && s.contains("arena_bytes") && s.contains("optimal")) << name;
    }
    EXPECT_TRUE(byName["search"].contains("states_explored"));
}

TEST(ScheduleModels, CliDefaultKeepsModelOrderAndRejectsUnknownSchedule) {
    const auto model = fixture("resnet_tiny_static.onnx");
    const auto plain = test::runCli({"memplan", model, "--json"});
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
    const auto j = nlohmann::json::parse(plain.out);
    ASSERT_EQ(j["schedules"].size(), 1u);
    EXPECT_EQ(j["schedules"][0]["name"], "exporter");
    EXPECT_EQ(j["peak_live_bytes"], j["lower_bound_bytes"]);
    Model m = onnxio::importModelFile(model);
    memory::completeShapesViaLiftedConstants(m);
    EXPECT_EQ(j["arena_bytes"].get<int64_t>(), memory::planMemory(m, m.graph, {}).arenaBytes);
    const auto bad = test::runCli({"memplan", model, "--schedule", "fastest"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("lpmf"), std::string::npos) << bad.err;
    const auto text = test::runCli({"memplan", model, "--schedule", "search"});
    ASSERT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("schedules (peak live bytes; any-order lower bound"), std::string::npos) << text.out;
}

}  // namespace
