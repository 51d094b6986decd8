// The basic pipeline on the five real models: checker-valid, fewer nodes, numerically equal
// under the interpreter; and diff-based stepping between every pair of snapshots.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "onnx/Checker.h"
#include "onnx/Import.h"
#include "passes/Diff.h"
#include "passes/PassManager.h"

using namespace passlens;
using namespace passlens::passes;

namespace {

using Dims = std::vector<std::pair<std::string, int64_t>>;

Dims pinsFor(const ir::Model& m, int64_t h, int64_t w) {
    // PP-OCR inputs are x[?,3,?,?]: pin every symbolic dim of the first input.
    Dims pins;
    const auto& in = m.graph.value(eval::runtimeInputs(m.graph).at(0));
    if (!in.type.shape) return pins;
    const auto& d = in.type.shape->dims;
    int64_t values[] = {1, 3, h, w};
    for (size_t i = 0; i < d.size() && i < 4; ++i)
        if (!d[i].isStatic() && !d[i].param.empty()) pins.push_back({d[i].param, values[i]});
    return pins;
}

std::vector<ir::TensorPtr> audioInputs(bool legacy) {
    std::vector<float> a(legacy ? 512 : 576);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.3f * std::sin(0.05f * float(i)) + 0.01f * std::cos(1.3f * float(i));
    auto audio = ir::makeTensorOf<float>(ir::DataType::Float, {1, (int64_t)a.size()}, a);
    auto sr = ir::makeTensorOf<int64_t>(ir::DataType::Int64, {}, {16000});
    if (legacy) {
        auto state = ir::makeTensorOf<float>(ir::DataType::Float, {2, 1, 64}, std::vector<float>(128, 0.f));
        return {audio, sr, state, state};
    }
    return {audio, ir::makeTensorOf<float>(ir::DataType::Float, {2, 1, 128}, std::vector<float>(256, 0.f)), sr};
}

}  // namespace

class PassesRealModel : public ::testing::TestWithParam<std::string> {};

TEST_P(PassesRealModel, BasicLevelPreservesOutputsWithFewerNodes) {
    const std::string file = GetParam();
    ir::Model m = onnxio::importModelFile(test::realModel(file));
    int64_t h = file.find("det") != std::string::npos ? 64 : 48, w = 64;
    const bool silero = file.find("silero") != std::string::npos;
    Dims pins = silero ? (file.find("legacy") != std::string::npos ? Dims{{"batch", 1}, {"sequence", 512}} : Dims{})
                       : pinsFor(m, h, w);
    if (!pins.empty()) onnxio::pinDims(m, pins);
    eval::RunOptions ro;
    ro.dims = pins;
    // Silero needs a real sample rate and a zero state; PP-OCR takes seeded random images.
    auto inputs = silero ? audioInputs(file.find("legacy") != std::string::npos) : eval::randomInputs(m, 7, pins);
    auto reference = eval::run(m, inputs, ro);
    ir::Model original = m;
    size_t before = countNodesDeep(m.graph);
    PassManager pm;
    pm.addLevel(Level::Basic);
    PipelineOptions o;
    o.keepSnapshots = false;
    pm.run(m, o);
    size_t after = countNodesDeep(m.graph);
    EXPECT_LT(after, before);
    auto problem = onnxio::checkModel(m);
    EXPECT_FALSE(problem.has_value()) << *problem;
    auto got = eval::run(m, inputs, ro);
    for (const auto& d : eval::compareOutputs(original, got, reference, 1e-4, 1e-5))
        EXPECT_TRUE(d.ok) << file << " output " << d.name << " max abs " << d.maxAbs;
    std::printf("[ nodes ] %s: %zu -> %zu\n", file.c_str(), before, after);
}

INSTANTIATE_TEST_SUITE_P(Five, PassesRealModel, ::testing::ValuesIn(test::realModelNames()),
                         [](const auto& info) {
                             std::string n = info.param;
                             for (char& c : n) if (!isalnum((unsigned char)c)) c = '_';
                             return n;
                         });

TEST(PassesSnapshots, DiffReproducesNodeSetsForAllPairs) {
    ir::Model m = onnxio::importModelFile(test::realModel("ch_PP-OCRv4_rec_infer.onnx"));
    PassManager pm;
    pm.addLevel(Level::All);
    auto res = pm.run(m);
    std::vector<std::shared_ptr<const ir::Model>> snaps{res.initial};
    for (const auto& s : res.steps) snaps.push_back(s.snapshot);
    ASSERT_GE(snaps.size(), 5u);
    EXPECT_NE(nodeIdSet(snaps.front()->graph), nodeIdSet(snaps.back()->graph));
    for (size_t a = 0; a < snaps.size(); ++a)
        for (size_t b = 0; b < snaps.size(); ++b) {
            auto diffs = diffModels(*snaps[a], *snaps[b]);
            ASSERT_FALSE(diffs.empty());
            ASSERT_EQ(diffs[0].graphPath, "");
            EXPECT_EQ(applyNodeDiff(nodeIdSet(snaps[a]->graph), diffs[0]), nodeIdSet(snaps[b]->graph)) << a << "->" << b;
        }
}
