// Opening a large graph through its hierarchy: display graph + grouping + the opening drawing,
// for layered models of ~1k, 2k, 8k and 25k nodes and a 50k-node chain; opening one more group;
// against the baseline of building the display graph alone (work any drawing needs), in one
// process. Shared placements are cleared before every measured iteration (cold layouts).
#include <benchmark/benchmark.h>

#include <map>

#include "HierarchyModels.h"
#include "hierarchy/Hierarchy.h"
#include "layout/HierarchicalLayout.h"
#include "passes/PassManager.h"

using namespace passlens;

namespace {

constexpr size_t kBudget = 60;  // the app's opening box budget (ui::kOpeningBoxBudget)

const ir::Model& model(int layers) {
    static std::map<int, ir::Model> models;
    auto it = models.find(layers);
    if (it == models.end())
        it = models.emplace(layers, layers > 0 ? test::layeredModel(layers, test::LayerNaming::Flat)
                                               : test::chainModel(-layers)).first;
    return it->second;
}

void BM_DisplayGraphOnly(benchmark::State& state) {
    const ir::Model& m = model(int(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(layout::buildDisplayGraph(m.graph));
    state.counters["nodes"] = double(m.graph.nodeOrder().size());
}

void BM_OpenHierarchical(benchmark::State& state) {
    const ir::Model& m = model(int(state.range(0)));
    size_t boxes = 0, groups = 0;
    for (auto _ : state) {
        state.PauseTiming();
        layout::clearSharedLayoutCache();
        state.ResumeTiming();
        auto dg = layout::buildDisplayGraph(m.graph);
        auto h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(m.graph));
        auto opening = layout::expansionWithinBudget(*h, dg, kBudget);
        layout::HierarchicalLayouter layouter(h, std::move(dg), nullptr);
        auto drawing = layouter.draw(opening);
        boxes = drawing.display.nodes.size();
        groups = h->groups.size();
    }
    state.counters["nodes"] = double(m.graph.nodeOrder().size());
    state.counters["boxes"] = double(boxes);
    state.counters["groups"] = double(groups);
}

void BM_ExpandOneGroup(benchmark::State& state) {
    const ir::Model& m = model(int(state.range(0)));
    auto h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(m.graph));
    auto dg = layout::buildDisplayGraph(m.graph);
    auto opening = layout::expansionWithinBudget(*h, dg, kBudget);
    // The middle collapsed group with no subgroups: a layer, a block or a section.
    hierarchy::GroupId target = hierarchy::kNoGroup;
    std::vector<hierarchy::GroupId> leaves;
    for (const auto& g : h->groups)
        if (g.children.empty() && g.id != hierarchy::kRootGroup && !opening.count(g.id)) leaves.push_back(g.id);
    if (!leaves.empty()) target = leaves[leaves.size() / 2];
    for (auto _ : state) {
        state.PauseTiming();
        layout::clearSharedLayoutCache();
        layout::HierarchicalLayouter layouter(h, dg, nullptr);
        layouter.draw(opening);
        state.ResumeTiming();
        if (target != hierarchy::kNoGroup) benchmark::DoNotOptimize(layouter.draw(layout::withPathTo(*h, opening, target)));
    }
}

/// Stepping to a pass in the app: the after-graph is grouped and drawn at the same opening; groups
/// the pass left alone reuse the placements of the before-graph (warm, outside the timing).
void BM_StepOnePass(benchmark::State& state) {
    const ir::Model& before = model(int(state.range(0)));
    ir::Model after = before;
    passes::PassManager pm;
    pm.addPass("fuse-layer-norm");
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    pm.run(after, po);
    size_t placed = 0;
    for (auto _ : state) {
        state.PauseTiming();
        layout::clearSharedLayoutCache();
        {
            auto h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(before.graph));
            auto dg = layout::buildDisplayGraph(before.graph);
            auto opening = layout::expansionWithinBudget(*h, dg, kBudget);
            layout::HierarchicalLayouter(h, std::move(dg), nullptr).draw(opening);
        }
        state.ResumeTiming();
        auto h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(after.graph));
        auto dg = layout::buildDisplayGraph(after.graph);
        auto opening = layout::expansionWithinBudget(*h, dg, kBudget);
        placed = layout::HierarchicalLayouter(h, std::move(dg), nullptr).draw(opening).placements;
    }
    state.counters["placements"] = double(placed);
}

}  // namespace

// Layers of 14 ops: 70 ≈ 1k nodes, 140 ≈ 2k, 560 ≈ 8k, 1800 ≈ 25k; negative = a chain of that many.
BENCHMARK(BM_DisplayGraphOnly)->Arg(70)->Arg(140)->Arg(560)->Arg(1800)->Arg(-50000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenHierarchical)->Arg(70)->Arg(140)->Arg(560)->Arg(1800)->Arg(-50000)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_StepOnePass)->Arg(140)->Arg(1800)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_ExpandOneGroup)->Arg(140)->Arg(1800)->Arg(-50000)->Unit(benchmark::kMillisecond)->Iterations(3);
