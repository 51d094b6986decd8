#pragma once
// Shared by the recomputation tests: gradient comparison (every `_grad` output of two training
// graphs, run by the interpreter on the same seeded inputs), a budget at a reference strategy's
// arena, and the Pareto curve against √n and all.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "autodiff/Recompute.h"
#include "autodiff/RecomputeFacts.h"
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

/// Applies a `--recompute` strategy to `m` (an infeasible budget leaves it unchanged).
inline autodiff::RecomputeResult recomputeWith(ir::Model& m, const std::string& strategy) {
    return autodiff::recomputeModel(m, autodiff::parseRecomputeOptions(strategy), false);
}

/// A budget at the arena `reference` (sqrt, all) reaches on `train`: feasible, planned within it, for
/// no more extra FLOPs. `budgeted` gets the rewritten model; `ref`/`budget` the two results.
inline void expectBudgetAtArenaOf(const ir::Model& train, const std::string& reference, ir::Model& budgeted,
                                  autodiff::RecomputeResult& ref, autodiff::RecomputeResult& budget) {
    ir::Model m = train;
    ref = recomputeWith(m, reference);
    budgeted = train;
    budget = recomputeWith(budgeted, "budget=" + std::to_string(ref.peakAfter));
    ASSERT_TRUE(budget.feasible) << budget.message;
    EXPECT_LE(autodiff::plannedPeak(budgeted), ref.peakAfter) << budget.message;
    EXPECT_LE(budget.extraFlops, ref.extraFlops) << budget.message << " | " << ref.message;
}

/// No point of the Pareto curve is dominated by √n or all, and the curve reaches their arenas.
inline void expectCurveNotDominatedBySqrtOrAll(const autodiff::RecomputeCurve& c) {
    ASSERT_FALSE(c.curve.empty());
    for (const autodiff::RecomputePoint* ref : {&c.sqrt, &c.all}) {
        EXPECT_LE(c.curve.front().arenaBytes, ref->arenaBytes) << ref->label;
        for (const auto& p : c.curve) {
            const bool dominated = ref->arenaBytes <= p.arenaBytes && ref->extraFlops <= p.extraFlops &&
                                   (ref->arenaBytes < p.arenaBytes || ref->extraFlops < p.extraFlops);
            EXPECT_FALSE(dominated) << ref->label << " (" << ref->arenaBytes << " B, " << ref->extraFlops << ") dominates " << p.label
                                    << " (" << p.arenaBytes << " B, " << p.extraFlops << ")";
        }
    }
}

}  // namespace passlens::test
