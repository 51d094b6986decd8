// The interpreter's BatchNormalization in training mode (opset 14+): batch statistics per channel
// (population variance) and the running mean/var outputs moved towards them by 1 − momentum, as
// the ONNX reference (`_batchnorm_training_mode`). Values worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "eval/Interpreter.h"
#include "eval/TensorOps.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

std::vector<TensorPtr> runBatchNorm(const std::vector<TensorPtr>& inputs, std::vector<Attribute> attrs, size_t outputs) {
    GraphBuilder b("bn_training", 15);
    std::vector<ValueId> ins;
    for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(b.constant("in" + std::to_string(i), inputs[i]));
    for (ValueId v : b.opMulti("BatchNormalization", ins, outputs, std::move(attrs), "bn")) b.output(v);
    return eval::run(b.model(), {});
}

}  // namespace

TEST(EvalBatchNormTraining, BatchStatisticsAndRunningOutputs) {
    // x: N=2, C=2, 1×2 spatial. Channel 0 holds 1, 2 (n=0) and 3, 4 (n=1): mean 2.5, var 1.25;
    // channel 1 holds 0, 0, 2, 2: mean 1, var 1. scale (2, 1), B (0, 0.5), eps 0, momentum 0.9,
    // input mean (0, 1), var (1, 3): running mean (0.25, 1), running var (1.025, 2.8).
    const auto outs = runBatchNorm({floatTensor({2, 2, 1, 2}, {1, 2, 0, 0, 3, 4, 2, 2}), floatTensor({2}, {2, 1}), floatTensor({2}, {0, 0.5f}),
                                    floatTensor({2}, {0, 1}), floatTensor({2}, {1, 3})},
                                   {Attribute::makeInt("training_mode", 1), Attribute::makeFloat("epsilon", 0.f), Attribute::makeFloat("momentum", 0.9f)},
                                   3);
    ASSERT_EQ(outs.size(), 3u);
    const double s = 2 / std::sqrt(1.25);
    const std::vector<double> y = {-1.5 * s, -0.5 * s, -1 + 0.5, -1 + 0.5, 0.5 * s, 1.5 * s, 1 + 0.5, 1 + 0.5};
    const auto got = eval::toDoubles(*outs[0]);
    ASSERT_EQ(got.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(got[i], y[i], 1e-5) << i;
    const auto mean = eval::toDoubles(*outs[1]), var = eval::toDoubles(*outs[2]);
    EXPECT_NEAR(mean[0], 0.25, 1e-6);
    EXPECT_NEAR(mean[1], 1.0, 1e-6);
    EXPECT_NEAR(var[0], 1.025, 1e-6);
    EXPECT_NEAR(var[1], 2.8, 1e-6);
}

TEST(EvalBatchNormTraining, InferenceModeStillUsesTheInputStatistics) {
    // training_mode 0: (x − mean)/√(var + eps)·scale + B with the given mean 1 and var 4.
    const auto outs = runBatchNorm({floatTensor({1, 1, 3}, {1, 3, 5}), floatTensor({1}, {1}), floatTensor({1}, {0}), floatTensor({1}, {1}),
                                    floatTensor({1}, {4})},
                                   {Attribute::makeFloat("epsilon", 0.f)}, 1);
    EXPECT_EQ(eval::toDoubles(*outs[0]), (std::vector<double>{0, 1, 2}));
}
