// dot layout time: the largest real model and a generated 2,000-node chain with skip edges,
// Graphviz defaults (unlimited network simplex) vs the app's tuned nslimit, in one process.
#include <benchmark/benchmark.h>

#include "examples/Builder.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"

using namespace passlens;

namespace {

ir::Model skipChain(int nodes) {
    ir::GraphBuilder b("skip_chain");
    ir::ValueId x = b.input("x", ir::DataType::Float, {1, 8});
    std::vector<ir::ValueId> vals{x};
    for (int i = 0; i < nodes; ++i) {
        ir::ValueId prev = vals.back();
        // Every 4th node adds a skip connection from 8 steps back, like residual blocks.
        if (i % 4 == 3 && vals.size() > 8) vals.push_back(b.op("Add", {prev, vals[vals.size() - 8]}));
        else vals.push_back(b.op(i % 2 ? "Relu" : "Sigmoid", {prev}));
    }
    b.output(vals.back());
    return b.finish();
}

layout::LayoutRequest requestFor(const ir::Model& m, bool tuned) {
    layout::LayoutOptions o;
    if (!tuned) o.nslimit.reset();
    return layout::toLayoutRequest(layout::buildDisplayGraph(m.graph), nullptr, false, o);
}

void run(benchmark::State& state, const layout::LayoutRequest& req) {
    double dot = 0;
    for (auto _ : state) dot = layout::layoutGraph(req).seconds;
    state.counters["boxes"] = double(req.boxes.size());
    state.counters["dot_s"] = dot;
}

void BM_Chain2000_Default(benchmark::State& s) { static auto r = requestFor(skipChain(2000), false); run(s, r); }
void BM_Chain2000_Tuned(benchmark::State& s) { static auto r = requestFor(skipChain(2000), true); run(s, r); }
void BM_Chain200_Tuned(benchmark::State& s) { static auto r = requestFor(skipChain(200), true); run(s, r); }
void BM_PPOCRv4Rec_Default(benchmark::State& s) {
    static auto r = requestFor(onnxio::importModelFile(PASSLENS_MODELS_DIR "/ch_PP-OCRv4_rec_infer.onnx"), false);
    run(s, r);
}
void BM_PPOCRv4Rec_Tuned(benchmark::State& s) {
    static auto r = requestFor(onnxio::importModelFile(PASSLENS_MODELS_DIR "/ch_PP-OCRv4_rec_infer.onnx"), true);
    run(s, r);
}

}  // namespace

BENCHMARK(BM_Chain200_Tuned)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Chain2000_Tuned)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_Chain2000_Default)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_PPOCRv4Rec_Tuned)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_PPOCRv4Rec_Default)->Unit(benchmark::kSecond)->Iterations(1);
// main() comes from benchmark_main (all benchmarks share passlens_bench).
