#pragma once
// Examples for the training lecture: the lecture's f(x1, x2) = ln(x1) + x1·x2 − sin(x2) (forward
// only: build its gradient with the autodiff pass) and a 3-layer MLP, forward and with its mse
// training graph.
#include "ir/Model.h"

namespace passlens::examples {

ir::Model lectureFunction();
ir::Model mlpForward();
ir::Model mlpTraining();

}  // namespace passlens::examples
