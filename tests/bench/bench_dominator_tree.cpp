// The dominator tree view's work on the real models: build the post-dominator tree, turn it into a
// drawing and lay it out with Graphviz, against a baseline in the same process: laying out the
// model's graph itself, which the graph view does anyway.
#include <benchmark/benchmark.h>

#include "analysis/DominatorPath.h"
#include "analysis/Dominators.h"
#include "layout/DisplayGraph.h"
#include "layout/DominatorTreeDisplay.h"
#include "onnx/Import.h"

namespace {

using namespace passlens;

const char* const kModels[] = {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx",
                               "ch_ppocr_mobile_v2.0_cls_infer.onnx"};

const ir::Model& model(int i) {
    static std::vector<ir::Model> models = [] {
        std::vector<ir::Model> out;
        for (const char* name : kModels) out.push_back(onnxio::importModelFile(std::string(PASSLENS_MODELS_DIR) + "/" + name));
        return out;
    }();
    return models.at(static_cast<size_t>(i));
}

void BM_DomTreeBaselineGraphLayout(benchmark::State& state) {
    const auto& m = model(static_cast<int>(state.range(0)));
    const auto dg = layout::buildDisplayGraph(m.graph);
    for (auto _ : state) benchmark::DoNotOptimize(layout::layoutGraph(layout::toLayoutRequest(dg, {})).bounds.width);
    state.SetLabel(std::string(kModels[state.range(0)]) + ", " + std::to_string(dg.nodes.size()) + " boxes");
}

void BM_DomTreePostTreeAndLayout(benchmark::State& state) {
    const auto& m = model(static_cast<int>(state.range(0)));
    size_t boxes = 0;
    for (auto _ : state) {
        auto tree = analysis::DominatorTree::build(m.graph, true);
        auto dg = layout::buildDominatorTreeDisplay(m.graph, tree);
        boxes = dg.nodes.size();
        benchmark::DoNotOptimize(layout::layoutGraph(layout::toLayoutRequest(dg, {})).bounds.width);
    }
    state.SetLabel(std::string(kModels[state.range(0)]) + ", " + std::to_string(boxes) + " boxes");
}

/// The highlight for every node in turn (what clicking through the graph costs).
void BM_DomTreePathEveryNode(benchmark::State& state) {
    const auto& m = model(static_cast<int>(state.range(0)));
    auto tree = analysis::DominatorTree::build(m.graph, true);
    for (auto _ : state)
        for (ir::NodeId n : m.graph.nodeOrder())
            benchmark::DoNotOptimize(analysis::pathToImmediateDominator(m.graph, tree, n).size());
    state.SetLabel(std::string(kModels[state.range(0)]) + ", " + std::to_string(m.graph.nodeCount()) + " nodes");
}

}  // namespace

BENCHMARK(BM_DomTreeBaselineGraphLayout)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DomTreePostTreeAndLayout)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DomTreePathEveryNode)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);
