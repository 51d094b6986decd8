#pragma once
// Gradient comparison shared by the recomputation tests: every `_grad` output of two training
// graphs, run by the interpreter on the same seeded inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "eval/Interpreter.h"
#include "ir/Model.h"

namespace passlens::test {

inline std::vector<ir::TensorPtr> trainingInputsFor(const ir::Model& m) {
    auto inputs = eval::randomInputs(m, 17);
    // Cross-entropy labels must name a class.
    for (auto& in : inputs)
        if (in->dtype == ir::DataType::Int64) {
            std::vector<int64_t> labels(static_cast<size_t>(in->elementCount()));
            for (size_t k = 0; k < labels.size(); ++k) labels[k] = static_cast<int64_t>(k % 4);
            in = ir::makeTensorOf(ir::DataType::Int64, in->dims, labels);
        }
    return inputs;
}

/// Every `_grad` output of `after` equals the one of `before` (same ops on the same values: exact up
/// to the last bit, checked with a tolerance of 1e-6 relative).
inline void expectSameGradients(const ir::Model& before, const ir::Model& after) {
    auto inputs = trainingInputsFor(before);
    auto a = eval::run(before, inputs), b = eval::run(after, inputs);
    ASSERT_EQ(a.size(), b.size());
    size_t grads = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string name = before.graph.value(before.graph.outputs()[i]).name;
        ASSERT_EQ(name, after.graph.value(after.graph.outputs()[i]).name);
        if (name.size() < 5 || name.substr(name.size() - 5) != "_grad") continue;
        ++grads;
        ASSERT_EQ(a[i]->elementCount(), b[i]->elementCount()) << name;
        for (int64_t k = 0; k < a[i]->elementCount(); ++k) {
            const float x = a[i]->as<float>()[k], y = b[i]->as<float>()[k];
            ASSERT_LE(std::fabs(x - y), 1e-6f * std::max(1.0f, std::fabs(x))) << name << "[" << k << "]";
        }
    }
    EXPECT_GT(grads, 0u);
}

}  // namespace passlens::test
