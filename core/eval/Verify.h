#pragma once
// Numerical verification of a rewritten model against a reference run on the same seeded inputs
// (`optimize --verify` and the stepper's "Verify outputs" column share it).
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "eval/Interpreter.h"

namespace passlens::eval {

inline constexpr uint64_t kVerifySeed = 1234;
inline constexpr double kVerifyRtol = 1e-4, kVerifyAtol = 1e-5;

struct OutputCheck {
    enum class Status { Match, Differ, NotRun };
    Status status = Status::NotRun;
    std::string output;           ///< Differ: the first differing output
    double maxAbs = 0, maxRel = 0; ///< Differ: of that output; Match: worst over all outputs
    std::string reason;           ///< NotRun: why (unsupported op, ...)
};

/// Compares `got` with `reference` (outputs of `ref`): Match when every output is within
/// rtol/atol, otherwise Differ naming the first output that is not.
OutputCheck checkOutputs(const ir::Model& ref, const std::vector<ir::TensorPtr>& got,
                         const std::vector<ir::TensorPtr>& reference, double rtol = kVerifyRtol,
                         double atol = kVerifyAtol);

/// Verifies a pipeline step by step: the constructor runs the input model once on seeded random
/// inputs; check(m) runs m on the same inputs and compares with the outputs of the previous
/// checked model (so a Differ is the fault of that step alone) and with the input model's.
/// Never throws except Error(Cancelled) when `cancel` is set.
class StepVerifier {
public:
    StepVerifier(const ir::Model& input, std::vector<std::pair<std::string, int64_t>> dims = {},
                 const std::atomic<bool>* cancel = nullptr, uint64_t seed = kVerifySeed);
    /// The input model's own state: Match when it ran, NotRun with the reason otherwise.
    const OutputCheck& inputCheck() const { return input_; }
    /// Symbolic input dims not pinned by `dims`, run as 1.
    const std::vector<std::string>& pinnedToOne() const { return pinnedToOne_; }

    struct StepCheck {
        OutputCheck vsPrevious;  ///< against the model before this step
        OutputCheck vsInput;     ///< against the input model
    };
    StepCheck check(const ir::Model& m);

private:
    bool runModel(const ir::Model& m, std::vector<ir::TensorPtr>& out, std::string& whyNot) const;

    ir::Model inputModel_;  ///< names and order of the outputs (a copy shares its buffers)
    RunOptions options_;
    std::vector<ir::TensorPtr> inputs_, inputOutputs_, previous_;
    std::vector<std::string> pinnedToOne_;
    OutputCheck input_;
};

}  // namespace passlens::eval
