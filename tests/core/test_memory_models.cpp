// Memory plans of real models through the CLI's JSON, checked against lifetimes recomputed here
// from the imported graph (not via core/memory's lifetime code).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "TestSupport.h"
#include "examples/Builder.h"
#include "memory/MemoryPlan.h"
#include "memory/ShapeAssist.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"

using namespace passlens;
using nlohmann::json;

namespace {
struct Case {
    std::string file;
    std::vector<std::pair<std::string, int64_t>> dims;
};
const std::vector<Case>& cases() {
    static const std::vector<Case> c = {
        {"ch_PP-OCRv4_det_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 640}, {"p2o.DynamicDimension.2", 640}}},
        {"ch_PP-OCRv4_rec_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}}},
        {"ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}}},
        {"silero_vad_legacy.onnx", {{"batch", 1}, {"sequence", 512}}},
        {"silero_vad_v5.onnx", {}},
    };
    return c;
}

/// Every name a subgraph reads that it does not define itself (outer-scope captures).
void captures(const ir::Graph& g, std::set<std::string>& out) {
    std::set<std::string> defined;
    for (ir::ValueId v : g.valueIds())
        if (!g.value(v).isOuterScope) defined.insert(g.value(v).name);
    for (ir::NodeId n : g.nodeOrder()) {
        for (ir::ValueId v : g.node(n).inputs)
            if (v != ir::kNone && !defined.count(g.value(v).name)) out.insert(g.value(v).name);
        for (const auto& a : g.node(n).attributes) {
            std::set<std::string> inner;
            if (a.g) captures(*a.g, inner);
            for (const auto& sg : a.graphs) captures(*sg, inner);
            for (const auto& name : inner)
                if (!defined.count(name)) out.insert(name);
        }
    }
}

json runMemplan(const Case& c, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"memplan", test::realModel(c.file), "--json"};
    for (const auto& [k, v] : c.dims) {
        args.push_back("--dim");
        args.push_back(k + "=" + std::to_string(v));
    }
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = test::runCli(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return json::parse(r.out);
}
}  // namespace

TEST(MemoryModels, JsonBuffersValidAgainstIndependentLifetimes) {
    for (const auto& c : cases()) {
        SCOPED_TRACE(c.file);
        if (!std::filesystem::exists(test::realModel(c.file))) GTEST_SKIP() << "models not fetched";
        for (const char* sched : {"model", "memory"}) {
            json j = runMemplan(c, {"--planner", "best", "--schedule", sched});
            onnxio::ImportOptions io;
            io.pinnedDims = c.dims;
            auto m = onnxio::importModelFile(test::realModel(c.file), io);
            const auto& g = m.graph;
            // Schedule: node display names -> step; must be a topological order of all nodes.
            std::map<std::string, int> step;
            for (const auto& name : j["schedule"]) step[name.get<std::string>()] = static_cast<int>(step.size());
            ASSERT_EQ(step.size(), g.nodeCount());
            std::map<std::string, int> producedAt, lastRead;
            for (ir::NodeId n : g.nodeOrder()) {
                int s = step.at(g.node(n).displayName());
                for (ir::ValueId v : g.node(n).outputs)
                    if (v != ir::kNone) producedAt[g.value(v).name] = s;
                std::set<std::string> reads;
                for (ir::ValueId v : g.node(n).inputs)
                    if (v != ir::kNone) reads.insert(g.value(v).name);
                for (const auto& a : g.node(n).attributes) {
                    if (a.g) captures(*a.g, reads);
                    for (const auto& sg : a.graphs) captures(*sg, reads);
                }
                for (const auto& r : reads) lastRead[r] = std::max(lastRead.count(r) ? lastRead[r] : -1, s);
            }
            for (const auto& [name, s] : lastRead)
                if (producedAt.count(name)) {
                    EXPECT_LT(producedAt[name], s) << name << " read before produced";
                }
            struct B { std::string name, inplaceOf; int64_t off, bytes; int first, last; };
            std::vector<B> bs;
            for (const auto& b : j["buffers"]) {
                B x{b["value"], b.value("inplace_of", ""), b["offset"], b["bytes"], b["first"], b["last"]};
                if (!b.value("workspace", false)) {
                    ASSERT_TRUE(producedAt.count(x.name)) << x.name;
                    EXPECT_EQ(x.first, producedAt[x.name]) << x.name;
                    EXPECT_EQ(x.last, std::max(producedAt[x.name], lastRead.count(x.name) ? lastRead[x.name] : -1)) << x.name;
                    auto v = g.findValue(x.name);
                    ASSERT_TRUE(v);
                    EXPECT_FALSE(g.value(*v).isGraphOutput) << "graph outputs are static, not planned";
                }
                EXPECT_LE(x.off + x.bytes, j["arena_bytes"].get<int64_t>());
                bs.push_back(x);
            }
            for (size_t a = 0; a < bs.size(); ++a)
                for (size_t b = a + 1; b < bs.size(); ++b) {
                    bool time = bs[a].first <= bs[b].last && bs[b].first <= bs[a].last;
                    bool addr = bs[a].off < bs[b].off + bs[b].bytes && bs[b].off < bs[a].off + bs[a].bytes;
                    if (!time || !addr) continue;
                    bool handoff = (bs[b].inplaceOf == bs[a].name && bs[a].last == bs[b].first) ||
                                   (bs[a].inplaceOf == bs[b].name && bs[b].last == bs[a].first);
                    EXPECT_TRUE(handoff) << bs[a].name << " overlaps " << bs[b].name;
                }
            // PP-OCR: pinned dims plus shape arithmetic make every size known.
            if (c.file.rfind("ch_", 0) == 0) {
                EXPECT_TRUE(j["unknown_size_values"].empty()) << j["unknown_size_values"].dump();
            }
            // best within 5% of the lower bound (over the values of known size).
            double arena = j["arena_bytes"], bound = j["lower_bound_bytes"];
            EXPECT_LE(arena, bound * 1.05);
            EXPECT_GE(arena, bound);
        }
    }
}

TEST(MemoryModels, BestNoWorseThanEachPlannerAndParallelAwareValid) {
    const auto& c = cases()[2];  // cls: small, convs, in-place chains
    if (!std::filesystem::exists(test::realModel(c.file))) GTEST_SKIP() << "models not fetched";
    int64_t best = runMemplan(c, {"--planner", "best"})["arena_bytes"];
    for (const char* p : {"naive", "inplace", "share", "greedy-size", "greedy-breadth"}) {
        json j = runMemplan(c, {"--planner", p});
        EXPECT_LE(best, j["arena_bytes"].get<int64_t>()) << p;
        EXPECT_EQ(j["planner"], p);
    }
    json naive = runMemplan(c, {"--planner", "naive"});
    EXPECT_EQ(naive["arena_bytes"], naive["naive_bytes"]);
    json inplace = runMemplan(c, {"--planner", "inplace"});
    int inplaceCount = 0;
    for (const auto& b : inplace["buffers"]) inplaceCount += b.contains("inplace_of");
    EXPECT_GT(inplaceCount, 10);
    EXPECT_LT(inplace["arena_bytes"].get<int64_t>(), naive["arena_bytes"].get<int64_t>());
    json aware = runMemplan(c, {"--planner", "greedy-size", "--parallel-aware"});
    EXPECT_TRUE(aware["parallel_aware"].get<bool>());
    EXPECT_GE(aware["arena_bytes"].get<int64_t>(), aware["lower_bound_bytes"].get<int64_t>());
}

TEST(MemoryModels, StaticDynamicClassesAndWorkspaceOnBuiltGraph) {
    // x -> Conv(3x3, W) -> Relu -> out; a Constant feeds an Add.
    ir::Model model;
    model.setOpset("", 13);
    auto& g = model.graph;
    auto x = g.addInput("x", ir::TypeInfo::tensor(ir::DataType::Float, ir::Shape{{ir::Dim::of(1), ir::Dim::of(2), ir::Dim::of(4), ir::Dim::of(4)}}));
    auto w = g.addInitializer("w", ir::makeTensorOf<float>(ir::DataType::Float, {3, 2, 3, 3}, std::vector<float>(54, 0.5f)));
    auto y = g.addValue("y", ir::TypeInfo::tensor(ir::DataType::Float, ir::Shape{{ir::Dim::of(1), ir::Dim::of(3), ir::Dim::of(2), ir::Dim::of(2)}}));
    auto r = g.addValue("r", g.value(y).type);
    auto k = g.addValue("k", g.value(y).type);
    auto o = g.addValue("o", g.value(y).type);
    auto u = g.addValue("u", ir::TypeInfo::tensor(ir::DataType::Float));  // no shape: unknown size
    g.addNode("Conv", {x, w}, {y}, {}, "conv");
    g.addNode("Relu", {y}, {r}, {}, "relu");
    g.addNode("Constant", {}, {k}, {ir::Attribute::makeTensor("value", ir::makeTensorOf<float>(ir::DataType::Float, {1, 3, 2, 2}, std::vector<float>(12, 1.f)))}, "const");
    g.addNode("Add", {r, k}, {o}, {}, "add");
    g.addNode("Neg", {o}, {u}, {}, "neg");
    g.markOutput(u);
    auto plan = memory::planMemory(model, g, {});
    EXPECT_EQ(plan.parameterBytes, 54 * 4);
    EXPECT_EQ(plan.constantBytes, 48);
    EXPECT_EQ(plan.inputBytes, 128);
    // y (48) r (48, in place of y) o (48, in place of r) + Conv workspace 2*3*3*2*2*4 = 288.
    EXPECT_EQ(plan.workspaceBytes, 288);
    EXPECT_EQ(plan.naiveBytes, 48 * 3 + 288);
    ASSERT_EQ(plan.unknownSizeValues.size(), 1u);
    EXPECT_EQ(plan.unknownSizeValues[0], "u");
    auto inplace = memory::planLifetimes(plan.lifetimes, "inplace");
    int chained = 0;
    for (const auto& b : inplace.buffers) chained += b.inplaceOf.has_value();
    EXPECT_EQ(chained, 2);
    EXPECT_EQ(inplace.arenaBytes, 48 + 288);
    // The Relu-fed Add: "o" overwrote "r" which overwrote "y".
    EXPECT_EQ(plan.lowerBoundBytes, 48 + 288);
}

TEST(MemoryModels, CliBadInput) {
    auto r = test::runCli({"memplan", test::realModel(cases()[2].file), "--planner", "magic"});
    EXPECT_EQ(r.exitCode, 2);
    EXPECT_NE(r.err.find("magic"), std::string::npos);
    r = test::runCli({"memplan", test::realModel(cases()[2].file), "--schedule", "random"});
    EXPECT_EQ(r.exitCode, 2);
    r = test::runCli({"memplan", "/nonexistent.onnx"});
    EXPECT_EQ(r.exitCode, 2);
}

TEST(MemoryModels, ShapeArithmeticMakesReshapeSizesKnown) {
    const auto& c = cases()[1];  // rec: Shape -> Slice -> Concat -> Reshape before the transformer block
    if (!std::filesystem::exists(test::realModel(c.file))) GTEST_SKIP() << "models not fetched";
    onnxio::ImportOptions io;
    io.pinnedDims = c.dims;
    auto m = onnxio::importModelFile(test::realModel(c.file), io);
    // The symbolic shape engine runs on import: the Reshape targets computed from Shape are known
    // before planning, so the lifted-constant fallback has nothing left to add.
    auto before = memory::planMemory(m, m.graph, {.planner = "naive"}).unknownSizeValues.size();
    size_t nodes = m.graph.nodeCount();
    int gained = memory::completeShapesViaLiftedConstants(m);
    EXPECT_EQ(before, 0u);
    EXPECT_EQ(gained, 0);
    EXPECT_EQ(m.graph.nodeCount(), nodes);
    auto flat = m.graph.findValue("flatten_14.tmp_0");
    ASSERT_TRUE(flat);
    EXPECT_EQ(m.graph.value(*flat).type.shape->toString(), "1x120x40");
    // With libonnx's inference alone the fallback still recovers them, types only.
    onnxio::ImportOptions bare = io;
    bare.inferShapes = false;
    auto raw = onnxio::importModelFile(test::realModel(c.file), bare);
    onnxio::inferShapes(raw, /*symbolic=*/false);
    EXPECT_GT(memory::planMemory(raw, raw.graph, {.planner = "naive"}).unknownSizeValues.size(), 100u);
    EXPECT_GT(memory::completeShapesViaLiftedConstants(raw), 100);
    EXPECT_EQ(memory::planMemory(raw, raw.graph, {.planner = "naive"}).unknownSizeValues.size(), 0u);
}

TEST(MemoryModels, SubgraphBodiesPlannedOnTheirOwn) {
    const auto& c = cases()[3];  // silero legacy: 2 top nodes, the network inside If bodies
    if (!std::filesystem::exists(test::realModel(c.file))) GTEST_SKIP() << "models not fetched";
    json j = runMemplan(c, {});
    EXPECT_EQ(j["schedule"].size(), 2u);
    ASSERT_FALSE(j["subgraphs"].empty());
    size_t steps = 0;
    for (const auto& s : j["subgraphs"]) {
        EXPECT_GE(s["arena_bytes"].get<int64_t>(), s["lower_bound_bytes"].get<int64_t>()) << s["path"];
        EXPECT_LE(s["arena_bytes"].get<int64_t>(), s["naive_bytes"].get<int64_t>()) << s["path"];
        steps += s["steps"].get<size_t>();
    }
    EXPECT_GT(steps, 200u);  // 250 nodes in all, minus the two top-level ones
}

namespace {
ir::TypeInfo f32(std::vector<int64_t> dims) {
    ir::Shape s;
    for (int64_t d : dims) s.dims.push_back(ir::Dim::of(d));
    return ir::TypeInfo::tensor(ir::DataType::Float, s);
}
}  // namespace

TEST(MemoryModels, MemoryAwareScheduleFinishesABranchFirst) {
    // Model order makes both big tensors before either reduce: two bigs live together.
    ir::Model model;
    model.setOpset("", 13);
    auto& g = model.graph;
    auto x = g.addInput("x", f32({256}));
    auto a = g.addValue("a", f32({256})), b = g.addValue("b", f32({256}));
    auto ra = g.addValue("ra", f32({1})), rb = g.addValue("rb", f32({1})), s = g.addValue("s", f32({1}));
    auto dead = g.addValue("dead", f32({4}));
    g.addNode("Exp", {x}, {a}, {}, "expA");
    g.addNode("Exp", {x}, {b}, {}, "expB");
    g.addNode("ReduceMax", {a}, {ra}, {}, "maxA");
    g.addNode("ReduceMax", {b}, {rb}, {}, "maxB");
    g.addNode("Add", {ra, rb}, {s}, {}, "sum");
    g.addNode("Abs", {x}, {dead}, {}, "unused");  // nobody reads `dead`
    g.markOutput(s);
    auto byModel = memory::planMemory(model, g, {});
    memory::PlanOptions o;
    o.schedule = memory::ScheduleKind::MemoryAware;
    auto byMemory = memory::planMemory(model, g, o);
    EXPECT_EQ(byModel.lowerBoundBytes, 2 * 1024 + 4);       // a, b and ra at maxA
    EXPECT_EQ(byMemory.lowerBoundBytes, 1024 + 4 + 4);      // b, ra and rb at maxB
    // The cheapest ready node first: the 16-byte dead Abs, then one branch to its end.
    std::vector<std::string> expect = {"unused", "expA", "maxA", "expB", "maxB", "sum"};
    EXPECT_EQ(byMemory.scheduleNames, expect);
    // The dead output lives exactly at its producing step.
    for (const auto& t : byModel.lifetimes)
        if (t.name == "dead") {
            EXPECT_EQ(t.first, 5);
            EXPECT_EQ(t.last, 5);
        }
    // Graph output `s` is static: never among the planned buffers.
    for (const auto& bf : byModel.buffers) EXPECT_NE(bf.name, "s");
    EXPECT_EQ(byModel.outputBytes, 4);
}
