// Interpreter speed on the real OCR models. Each figure comes with a ratio against a baseline
// measured in the same process: a naive single-threaded 256x256x256 float GEMM (33.6 MFLOP),
// so numbers from different machines can be compared.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "eval/Interpreter.h"
#include "onnx/Import.h"

namespace {

using namespace passlens;

double naiveGemmSeconds() {
    static const double seconds = [] {
        const int n = 256;
        std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
        double best = 1e9;
        for (int rep = 0; rep < 3; ++rep) {
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < n; ++i)
                for (int j = 0; j < n; ++j) {
                    float s = 0;
                    for (int k = 0; k < n; ++k) s += a[i * n + k] * b[k * n + j];
                    c[i * n + j] = s;
                }
            benchmark::DoNotOptimize(c.data());
            best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        return best;
    }();
    return seconds;
}

void runModel(benchmark::State& state, const std::string& file, const std::vector<std::pair<std::string, int64_t>>& dims) {
    onnxio::ImportOptions o;
    o.pinnedDims = dims;
    auto m = onnxio::importModelFile(std::string(PASSLENS_MODELS_DIR) + "/" + file, o);
    auto inputs = eval::randomInputs(m, 1, dims);
    const double base = naiveGemmSeconds();
    double total = 0;
    for (auto _ : state) {
        auto t0 = std::chrono::steady_clock::now();
        auto out = eval::run(m, inputs);
        total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        benchmark::DoNotOptimize(out);
    }
    const double perRun = total / double(state.iterations());
    state.counters["ms_per_run"] = perRun * 1e3;
    state.counters["naive_gemm256_ms"] = base * 1e3;
    state.counters["x_naive_gemm256"] = perRun / base;
}

void BM_EvalPPOCRv4Det_1x3x640x640(benchmark::State& state) {
    runModel(state, "ch_PP-OCRv4_det_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 640}, {"p2o.DynamicDimension.2", 640}});
}
void BM_EvalPPOCRv4Rec_1x3x48x320(benchmark::State& state) {
    runModel(state, "ch_PP-OCRv4_rec_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}});
}
void BM_EvalPPOCRCls_1x3x48x192(benchmark::State& state) {
    runModel(state, "ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}});
}

BENCHMARK(BM_EvalPPOCRv4Det_1x3x640x640)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_EvalPPOCRv4Rec_1x3x48x320)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EvalPPOCRCls_1x3x48x192)->Unit(benchmark::kMillisecond)->MinTime(0.5);

}  // namespace
