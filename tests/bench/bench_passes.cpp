// Time of the basic pipeline on each real model, next to the import time of the same model
// (the baseline, measured in the same process).
#include <benchmark/benchmark.h>

#include <string>

#include "onnx/Import.h"
#include "passes/PassManager.h"

using namespace passlens;

namespace {

const char* kModels[] = {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
                         "silero_vad_legacy.onnx", "silero_vad_v5.onnx"};

std::string path(int i) { return std::string(PASSLENS_MODELS_DIR) + "/" + kModels[i]; }

void BM_ImportBaseline(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(onnxio::importModelFile(path((int)state.range(0))));
    state.SetLabel(kModels[state.range(0)]);
}

void runBasic(benchmark::State& state, bool inferShapes) {
    ir::Model original = onnxio::importModelFile(path((int)state.range(0)));
    passes::PassManager pm;
    pm.addLevel(passes::Level::Basic);
    passes::PipelineOptions o;
    o.keepSnapshots = false;
    o.inferShapesAfterEachPass = inferShapes;
    for (auto _ : state) {
        state.PauseTiming();
        ir::Model m = original;
        state.ResumeTiming();
        benchmark::DoNotOptimize(pm.run(m, o));
    }
    state.SetLabel(kModels[state.range(0)]);
}

void BM_BasicPipeline(benchmark::State& state) { runBasic(state, true); }
/// The same pipeline without shape inference between passes: what inference costs.
void BM_BasicPipelineNoShapeInference(benchmark::State& state) { runBasic(state, false); }

}  // namespace

BENCHMARK(BM_ImportBaseline)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BasicPipeline)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BasicPipelineNoShapeInference)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);
