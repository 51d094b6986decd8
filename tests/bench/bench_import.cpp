// Import speed on the largest real model, against a baseline in the same process: reading the
// same bytes from disk (the floor any importer pays).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>

#include "onnx/Import.h"

namespace {

std::string largestModel() {
    std::string best;
    uintmax_t bestSize = 0;
    for (const auto& e : std::filesystem::directory_iterator(PASSLENS_MODELS_DIR))
        if (e.path().extension() == ".onnx" && e.file_size() > bestSize) {
            bestSize = e.file_size();
            best = e.path().string();
        }
    return best;
}

void setBytes(benchmark::State& state, const std::string& path) {
    auto bytes = static_cast<int64_t>(std::filesystem::file_size(path));
    state.SetBytesProcessed(state.iterations() * bytes);
    state.SetLabel(std::filesystem::path(path).filename().string());
}

void BM_ImportBaselineReadFile(benchmark::State& state) {
    std::string path = largestModel();
    for (auto _ : state) {
        std::ifstream in(path, std::ios::binary);
        std::string bytes(std::filesystem::file_size(path), '\0');
        in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        benchmark::DoNotOptimize(bytes.data());
    }
    setBytes(state, path);
}
BENCHMARK(BM_ImportBaselineReadFile)->Unit(benchmark::kMillisecond);

void BM_ImportNoShapeInference(benchmark::State& state) {
    std::string path = largestModel();
    passlens::onnxio::ImportOptions o;
    o.inferShapes = false;
    for (auto _ : state) benchmark::DoNotOptimize(passlens::onnxio::importModelFile(path, o).graph.nodeCount());
    setBytes(state, path);
}
BENCHMARK(BM_ImportNoShapeInference)->Unit(benchmark::kMillisecond);

void BM_ImportWithShapeInference(benchmark::State& state) {
    std::string path = largestModel();
    for (auto _ : state) benchmark::DoNotOptimize(passlens::onnxio::importModelFile(path).graph.nodeCount());
    setBytes(state, path);
}
BENCHMARK(BM_ImportWithShapeInference)->Unit(benchmark::kMillisecond);

}  // namespace
