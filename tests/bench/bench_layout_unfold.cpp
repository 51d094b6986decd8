// PP-OCRv4 rec after the `all` pipeline with constants unfolded: one box per reader of a shared
// constant and weighted data edges (now) vs one shared box per constant and plain edges (before),
// against the folded drawing as the baseline, all in one process (det: now vs folded). Layout* = the app's layout (no labels; counters boxes, edges,
// dot_s); Render* = `passlens-cli render` (styled, edge labels, Graphviz writes the .dot text).
#include <benchmark/benchmark.h>

#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;

namespace {

ir::Model afterAll(const char* file) {
    auto m = onnxio::importModelFile(std::string(PASSLENS_MODELS_DIR "/") + file);
    passes::PassManager pm;
    pm.addLevel(passes::Level::All);
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    pm.run(m, po);
    return m;
}

layout::LayoutRequest request(const ir::Model& m, bool fold, bool copies, bool styled = false) {
    layout::DisplayOptions o;
    o.foldConstants = fold;
    o.copySharedConstants = copies;
    o.opset = m.opsetFor("") ? m.opsetFor("") : 17;
    return layout::toLayoutRequest(layout::buildDisplayGraph(m.graph, o), nullptr, styled);
}

void run(benchmark::State& state, const layout::LayoutRequest& req) {
    layout::LayoutResult r;
    for (auto _ : state) r = layout::layoutGraph(req);
    state.counters["width_pt"] = r.bounds.width;
    state.counters["height_pt"] = r.bounds.height;
    const double dot = r.seconds;
    state.counters["boxes"] = double(req.boxes.size());
    state.counters["edges"] = double(req.edges.size());
    state.counters["dot_s"] = dot;
}

void render(benchmark::State& state, const layout::LayoutRequest& req) {
    for (auto _ : state) layout::renderWithGraphviz(req, "dot", "/dev/null");
    state.counters["boxes"] = double(req.boxes.size());
    state.counters["edges"] = double(req.edges.size());
}

const ir::Model& rec() { static const ir::Model m = afterAll("ch_PP-OCRv4_rec_infer.onnx"); return m; }
const ir::Model& det() { static const ir::Model m = afterAll("ch_PP-OCRv4_det_infer.onnx"); return m; }
layout::LayoutRequest recRequest(bool fold, bool copies, bool styled = false) { return request(rec(), fold, copies, styled); }
/// The drawing before this change: one shared box per constant, unweighted edges, default nslimit.
layout::LayoutRequest recBefore(bool styled) {
    auto r = recRequest(false, false, styled);
    for (auto& e : r.edges) e.weight = 1;
    r.options.nslimit = layout::LayoutOptions{}.nslimit;
    return r;
}

void BM_LayoutFoldedDet(benchmark::State& s) { static auto r = request(det(), true, true); run(s, r); }
void BM_LayoutUnfoldedDet(benchmark::State& s) { static auto r = request(det(), false, true); run(s, r); }
void BM_LayoutFoldedRec(benchmark::State& s) { static auto r = recRequest(true, true); run(s, r); }
void BM_LayoutUnfoldedRec(benchmark::State& s) { static auto r = recRequest(false, true); run(s, r); }
void BM_LayoutUnfoldedRecBefore(benchmark::State& s) { static auto r = recBefore(false); run(s, r); }

void BM_RenderFoldedRec(benchmark::State& s) { static auto r = recRequest(true, true, true); render(s, r); }
void BM_RenderUnfoldedRec(benchmark::State& s) { static auto r = recRequest(false, true, true); render(s, r); }
void BM_RenderUnfoldedRecBefore(benchmark::State& s) { static auto r = recBefore(true); render(s, r); }

}  // namespace

BENCHMARK(BM_LayoutFoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutUnfoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutUnfoldedRecBefore)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutFoldedDet)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_LayoutUnfoldedDet)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderFoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderUnfoldedRec)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_RenderUnfoldedRecBefore)->Unit(benchmark::kSecond)->Iterations(1);
