// PP-OCRv4 rec after the `all` pipeline with constants unfolded: one box per reader of a shared
// constant (now) vs one shared box per constant (before), against the folded drawing as the
// baseline, all in one process. Layout* = the app's layout (no labels; counters boxes, edges,
// dot_s); Render* = `passlens-cli render` (styled, edge labels, Graphviz writes the .dot text).
#include <benchmark/benchmark.h>

#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;

namespace {

const ir::Model& recAfterAll() {
    static const ir::Model model = [] {
        auto m = onnxio::importModelFile(PASSLENS_MODELS_DIR "/ch_PP-OCRv4_rec_infer.onnx");
        passes::PassManager pm;
        pm.addLevel(passes::Level::All);
        passes::PipelineOptions po;
        po.keepSnapshots = false;
        pm.run(m, po);
        return m;
    }();
    return model;
}

layout::LayoutRequest recRequest(bool fold, bool copies, bool styled = false) {
    const auto& m = recAfterAll();
    layout::DisplayOptions o;
    o.foldConstants = fold;
    o.copySharedConstants = copies;
    o.opset = m.opsetFor("") ? m.opsetFor("") : 17;
    return layout::toLayoutRequest(layout::buildDisplayGraph(m.graph, o), nullptr, styled);
}

void run(benchmark::State& state, const layout::LayoutRequest& req) {
    double dot = 0;
    for (auto _ : state) dot = layout::layoutGraph(req).seconds;
    state.counters["boxes"] = double(req.boxes.size());
    state.counters["edges"] = double(req.edges.size());
    state.counters["dot_s"] = dot;
}

void render(benchmark::State& state, const layout::LayoutRequest& req) {
    for (auto _ : state) layout::renderWithGraphviz(req, "dot", "/dev/null");
    state.counters["boxes"] = double(req.boxes.size());
    state.counters["edges"] = double(req.edges.size());
}

void BM_LayoutFoldedRec(benchmark::State& s) { static auto r = recRequest(true, true); run(s, r); }
void BM_LayoutUnfoldedRec(benchmark::State& s) { static auto r = recRequest(false, true); run(s, r); }
void BM_LayoutUnfoldedRecSharedBoxes(benchmark::State& s) { static auto r = recRequest(false, false); run(s, r); }

void BM_RenderFoldedRec(benchmark::State& s) { static auto r = recRequest(true, true, true); render(s, r); }
void BM_RenderUnfoldedRec(benchmark::State& s) { static auto r = recRequest(false, true, true); render(s, r); }
void BM_RenderUnfoldedRecSharedBoxes(benchmark::State& s) { static auto r = recRequest(false, false, true); render(s, r); }

}  // namespace

BENCHMARK(BM_LayoutFoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutUnfoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutUnfoldedRecSharedBoxes)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderFoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderUnfoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderUnfoldedRecSharedBoxes)->Unit(benchmark::kSecond)->Iterations(1);
