#pragma once
// Examples for the training lecture: the lecture's f(x1, x2) = ln(x1) + x1·x2 − sin(x2) (forward
// only: build its gradient with the autodiff pass) and a 3-layer MLP, forward and with its mse
// training graph.
#include <cstdint>

#include "ir/Model.h"

namespace passlens::examples {

ir::Model lectureFunction();
ir::Model mlpForward();
ir::Model mlpTraining();
/// The small CNN of the autodiff tests (Conv/Relu/MaxPool/Conv/Sigmoid/AveragePool/Flatten/Gemm,
/// image [2,1,8,8], 4 classes) and its cross-entropy training graph.
ir::Model cnnForward();
ir::Model cnnTraining();
/// An equal-width MLP: `layers` × (Gemm [width×width] → Relu), no Relu after the last; input x [batch, width].
ir::Model deepMlpForward(int layers, int64_t width, int64_t batch);
ir::Model deepMlpTraining(int layers, int64_t width, int64_t batch);
/// deepMlpTraining(16, 128, 64): the recomputation lecture's 16-layer network (mse).
ir::Model mlp16Training();

}  // namespace passlens::examples
