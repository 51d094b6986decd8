#pragma once
// Runs a pass pipeline off the GUI thread. The worker copies the model, runs the passes with a
// cancel flag and reports progress per pass; the GUI receives one immutable PipelineRun.
#include <QString>
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "eval/Verify.h"
#include "ir/Model.h"
#include "passes/PassManager.h"

namespace passlens::ui {

/// One finished (or failed/cancelled) pipeline run. Row 0 of the stepper is the input model,
/// row i (1..steps) the snapshot after pass i.
struct PipelineRun {
    std::vector<std::string> passNames;                   ///< what was asked for
    std::shared_ptr<const passes::PipelineResult> result; ///< null when failed or cancelled
    QString error;                                        ///< non-empty when the run failed
    bool cancelled = false;
    /// "Verify outputs": one entry per row (row 0 = the input model's own run, vsPrevious only);
    /// empty when the run was not verified.
    std::vector<eval::StepVerifier::StepCheck> verification;
    std::vector<std::string> pinnedToOne;  ///< symbolic input dims the verification ran as 1

    bool verified() const { return !verification.empty(); }
    /// The first pass row whose outputs differ from the row before it, or -1.
    int firstDifferingRow() const;

    int rowCount() const { return result ? int(result->steps.size()) + 1 : 0; }
    /// The model shown at `row` (0 = input), or null out of range.
    std::shared_ptr<const ir::Model> modelAt(int row) const;
    /// The pass of `row` (row ≥ 1), or null.
    const passes::PipelineStep* stepAt(int row) const;
};
using PipelineRunPtr = std::shared_ptr<const PipelineRun>;

/// Synchronous run (tests; StepperPanel's LatestJob runs it off the GUI thread). Never throws. A name "layout:NHWC" runs the
/// layout pass toward that layout. `progress(done, total)` is called
/// after each pass (from the running thread).
/// With `verifyOutputs` the interpreter runs the model on seeded random inputs before the first
/// pass and after each one (eval::StepVerifier; cancel is honoured inside those runs too);
/// `verifyDims` pins symbolic input dims for those runs (the rest run as 1, as the CLI's --dim).
/// `registry` resolves the names (tests add passes of their own).
PipelineRun runPipeline(const ir::Model& model, const std::vector<std::string>& passNames,
                        const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress = {},
                        bool verifyOutputs = false, const std::vector<std::pair<std::string, int64_t>>& verifyDims = {},
                        const passes::PassRegistry& registry = passes::PassRegistry::global());

}  // namespace passlens::ui
