// The five real models run end to end on the interpreter: output shapes, finite values, and
// run-to-run determinism; `verify` of a model against itself reports zero difference.
#include <gtest/gtest.h>

#include <cmath>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "onnx/Import.h"

namespace passlens {
namespace {

using ir::DataType;

void expectFinite(const ir::Tensor& t, const std::string& what) {
    auto v = eval::toDoubles(t);
    ASSERT_FALSE(v.empty()) << what;
    for (double x : v) ASSERT_TRUE(std::isfinite(x)) << what << " has a non-finite value";
}

std::vector<ir::TensorPtr> runModel(const std::string& file, const std::vector<std::pair<std::string, int64_t>>& dims,
                                    std::vector<ir::TensorPtr> inputs = {}) {
    onnxio::ImportOptions o;
    o.pinnedDims = dims;
    auto m = onnxio::importModelFile(test::realModel(file), o);
    if (inputs.empty()) inputs = eval::randomInputs(m, 7, dims);
    return eval::run(m, inputs);
}

TEST(EvalModels, PPOCRv4DetSmall) {
    auto out = runModel("ch_PP-OCRv4_det_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 64}, {"p2o.DynamicDimension.2", 64}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 1, 64, 64}));
    expectFinite(*out[0], "det output");
    for (double x : eval::toDoubles(*out[0])) ASSERT_TRUE(x >= 0 && x <= 1) << "sigmoid output out of [0,1]";
}

TEST(EvalModels, PPOCRv4Rec) {
    auto out = runModel("ch_PP-OCRv4_rec_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 40, 6625}));
    expectFinite(*out[0], "rec output");
    // softmax rows sum to 1
    auto v = eval::toDoubles(*out[0]);
    double row = 0;
    for (int i = 0; i < 6625; ++i) row += v[i];
    EXPECT_NEAR(row, 1.0, 1e-4);
}

TEST(EvalModels, PPOCRMobileCls) {
    auto out = runModel("ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 48}, {"p2o.DynamicDimension.2", 192}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 2}));
    expectFinite(*out[0], "cls output");
    auto v = eval::toDoubles(*out[0]);
    EXPECT_NEAR(v[0] + v[1], 1.0, 1e-5);
}

std::vector<float> audio(size_t n) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = 0.3f * std::sin(0.05f * float(i)) + 0.01f * std::cos(1.3f * float(i));
    return v;
}

TEST(EvalModels, SileroLegacy) {
    std::vector<ir::TensorPtr> in{ir::makeTensorOf<float>(DataType::Float, {1, 512}, audio(512)),
                                  ir::makeTensorOf<int64_t>(DataType::Int64, {}, {16000}),
                                  ir::makeTensorOf<float>(DataType::Float, {2, 1, 64}, std::vector<float>(128, 0.0f)),
                                  ir::makeTensorOf<float>(DataType::Float, {2, 1, 64}, std::vector<float>(128, 0.0f))};
    auto out = runModel("silero_vad_legacy.onnx", {{"batch", 1}, {"sequence", 512}}, in);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(out[1]->dims, (std::vector<int64_t>{2, 1, 64}));
    EXPECT_EQ(out[2]->dims, (std::vector<int64_t>{2, 1, 64}));
    for (const auto& t : out) expectFinite(*t, "silero legacy output");
    const double p = eval::toDoubles(*out[0])[0];
    EXPECT_GE(p, 0.0);
    EXPECT_LE(p, 1.0);
}

TEST(EvalModels, SileroV5) {
    std::vector<ir::TensorPtr> in{ir::makeTensorOf<float>(DataType::Float, {1, 576}, audio(576)),
                                  ir::makeTensorOf<float>(DataType::Float, {2, 1, 128}, std::vector<float>(256, 0.0f)),
                                  ir::makeTensorOf<int64_t>(DataType::Int64, {}, {16000})};
    auto out = runModel("silero_vad_v5.onnx", {}, in);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0]->dims, (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(out[1]->dims, (std::vector<int64_t>{2, 1, 128}));
    for (const auto& t : out) expectFinite(*t, "silero v5 output");
}

TEST(EvalModels, VerifyAgainstItselfIsExact) {
    const auto model = test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
    auto r = test::runCli({"verify", model, model, "--dim", "p2o.DynamicDimension.1=48", "--dim", "p2o.DynamicDimension.2=96", "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("\"max_abs\": 0.0"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"ok\": true"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace passlens
