#pragma once
// Numerical verification of a rewritten model against a reference run on the same seeded inputs
// (`optimize --verify` and the stepper's "Verify outputs" column share it).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eval/Interpreter.h"

namespace passlens::eval {

/// How randomInputs picks values.
enum class InputRanges {
    Uniform,  ///< as randomInputs(m, seed, dims): floats in [-1,1), ints 0..3, bools random (run's, verify's)
    /// As Uniform, but image-like floats (rank 4 with 1, 3 or 4 channels at axis 1: NCHW) uniform in
    /// [0,1), and ints read as Gather indices (token ids: directly or through Cast, Reshape, ...)
    /// uniform over the whole gathered axis, so data-dependent paths see the values they expect.
    Natural,
};
/// randomInputs (eval/Interpreter.h) with a choice of ranges; Uniform gives the same tensors.
std::vector<ir::TensorPtr> randomInputs(const ir::Model& m, uint64_t seed,
                                        const std::vector<std::pair<std::string, int64_t>>& dims, InputRanges ranges);

/// The seed of the per-pass input (optimize --verify and the stepper); natural input ranges.
inline constexpr uint64_t kVerifySeed = 1234;
/// The seeds of the natural-range inputs the original and the written model run on (the first is
/// kVerifySeed); one more input is `passlens-cli verify`'s default (uniform ranges, seed 0).
inline constexpr uint64_t kVerifySeeds[] = {kVerifySeed, 0, 1};
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
/// inputs (natural ranges, eval::InputRanges); check(m) runs m on the same inputs and compares
/// with the outputs of the previous checked model (so a Differ is the fault of that step alone)
/// and with the input model's. A model the interpreter cannot run (unsupported op) is NotRun; one
/// it supports that fails while running is Differ with the reason "fails to run: ...".
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

    /// The input the steps run on, and the input model's outputs on it (empty when NotRun).
    const std::vector<ir::TensorPtr>& inputs() const { return inputs_; }
    const std::vector<ir::TensorPtr>& inputOutputs() const { return inputOutputs_; }

private:

    ir::Model inputModel_;  ///< names and order of the outputs (a copy shares its buffers)
    RunOptions options_;
    std::vector<ir::TensorPtr> inputs_, inputOutputs_, previous_;
    std::vector<std::string> pinnedToOne_;
    OutputCheck input_;
};

/// One input `optimize --verify` runs the models on.
struct VerifyInput {
    std::string label;  ///< "seed 1234" (natural ranges) or "seed 0, uniform" (passlens-cli verify's)
    std::vector<ir::TensorPtr> tensors;
};
/// The natural-range inputs at kVerifySeeds, then `passlens-cli verify`'s default input.
std::vector<VerifyInput> verifyInputs(const ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& dims);

/// Runs `m` on `inputs`: Match with `out` filled; NotRun when the interpreter does not support the
/// model; Differ with reason "fails to run: ..." when it supports it but the run throws.
/// Rethrows Error(Cancelled).
OutputCheck runForCheck(const ir::Model& m, const std::vector<ir::TensorPtr>& inputs, const RunOptions& options,
                        std::vector<ir::TensorPtr>& out);

/// Outputs of `ref` that say nothing on these runs (outputsPerRun[run][output]): empty in every
/// run, or one value throughout. Each entry: "output 'boxes' is empty on all 4 inputs".
std::vector<std::string> degenerateOutputs(const ir::Model& ref,
                                           const std::vector<std::vector<ir::TensorPtr>>& outputsPerRun);

/// The model as a file holds it: exported to ONNX bytes and imported back (`dims` pinned on import,
/// as the CLI imports with --dim). Throws Error when export or import fails.
ir::Model writtenForm(const ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& dims = {});

/// optimize --verify. The original runs on every verifyInputs() input; afterPass() runs each pass's
/// model on the first one (StepVerifier) and remembers the first pass that broke it; checkWritten()
/// runs the model as written on all of them and gives the verdict. When the written model differs
/// and no pass was named, the steps' written forms are replayed on the input that showed it.
class PipelineVerifier {
public:
    PipelineVerifier(const ir::Model& original, std::vector<std::pair<std::string, int64_t>> dims = {},
                     const std::atomic<bool>* cancel = nullptr);

    /// Checks the model after pass `pass`; returns a line to print when it differs, else "".
    std::string afterPass(const std::string& pass, const ir::Model& m);
    const std::string& firstBadPass() const { return firstBadPass_; }

    enum class Verdict { Match, Differ, NotVerified };
    struct Result {
        Verdict verdict = Verdict::NotVerified;
        std::string firstBadPass;         ///< Differ: the pass that broke the outputs, when known
        std::vector<std::string> lines;   ///< the report, one line each ("verify: ...")
    };
    /// (pass, model after it) in pipeline order, for naming the pass when the per-pass checks saw
    /// nothing: each one's written form runs on the input that showed the difference.
    using Steps = std::vector<std::pair<std::string, std::shared_ptr<const ir::Model>>>;
    /// The verdict on the file at `path` as written (read back with the dims pinned): a file that
    /// cannot be read back is a difference.
    Result checkWrittenFile(const std::string& path, const Steps& steps = {});
    /// As checkWrittenFile, on a model already read back (e.g. writtenForm(optimized)).
    Result checkWritten(const ir::Model& written, const Steps& steps = {});

    const std::vector<VerifyInput>& inputs() const { return inputs_; }

private:
    Result check(const ir::Model* written, const std::string& whyUnreadable, const Steps& steps);
    /// The first step whose written form cannot be read back or differs on inputs_[input]; "" if none.
    std::string firstBadStep(size_t input, const Steps& steps) const;

    ir::Model original_;
    RunOptions options_;
    StepVerifier perPass_;
    std::vector<VerifyInput> inputs_;
    std::vector<std::vector<ir::TensorPtr>> reference_;  ///< the original's outputs per input (empty: NotRun)
    OutputCheck originalRun_;
    std::string firstBadPass_;
};

}  // namespace passlens::eval
