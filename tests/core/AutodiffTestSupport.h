#pragma once
// Gradient checking for the autodiff tests: the training graph's gradients (float32, our
// interpreter) against central finite differences of the loss computed in float64 — the
// interpreter in double where its kernels take double, the test's own double references for
// Conv, MaxPool and AveragePool (whose kernels are float-only).
#include <map>
#include <string>
#include <vector>

#include "examples/Builder.h"
#include "ir/Model.h"

namespace passlens::test {

/// The same model with every float32 tensor (initializers, inputs, types, Cast targets, tensor
/// attributes) in float64.
ir::Model toDouble(const ir::Model& m);

/// Runs the nodes `output` depends on, in float64, and returns that output's values.
std::vector<double> runDouble(const ir::Model& doubleModel, const std::string& output,
                              const std::map<std::string, ir::TensorPtr>& inputs = {});

struct GradCheck {
    double rtol = 1e-3;
    double atolScale = 1e-4;   ///< atol = atolScale · max(1, max |fd|)
    double step = 1e-6;        ///< finite-difference step in float64
    std::map<std::string, ir::TensorPtr> inputs;  ///< runtime inputs (float32 / int64), by name
    size_t maxElementsPerTensor = 400;  ///< checks a strided subset of larger tensors
};

struct GradReport {
    size_t checked = 0;          ///< elements compared
    double worstRel = 0;         ///< worst |ad − fd| / max(|fd|, atol)
    std::string worst;           ///< "w[3]: ad 0.12 fd 0.13"
};

/// Builds the training graph of `forward` (checker-clean and default-domain only, or the test
/// fails) and compares every requested gradient with finite differences of `loss`.
GradReport expectGradientsMatch(const ir::Model& forward, const std::string& loss, const std::vector<std::string>& wrt,
                                const GradCheck& check = {}, const std::string& output = {});

/// `y` reduced to a scalar with fixed random weights: L = Σ y·r (so each output element gets a
/// different adjoint). Marks L as the only graph output.
void addWeightedSumLoss(ir::GraphBuilder& b, ir::ValueId y, uint64_t seed = 99);

}  // namespace passlens::test
