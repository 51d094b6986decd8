#include "eval/Verify.h"

#include <algorithm>

#include "ir/Error.h"

namespace passlens::eval {

OutputCheck checkOutputs(const ir::Model& ref, const std::vector<ir::TensorPtr>& got,
                         const std::vector<ir::TensorPtr>& reference, double rtol, double atol) {
    OutputCheck c;
    c.status = OutputCheck::Status::Match;
    for (const auto& d : compareOutputs(ref, got, reference, rtol, atol)) {
        if (!d.ok) {
            c.status = OutputCheck::Status::Differ;
            c.output = d.name;
            c.maxAbs = d.maxAbs;
            c.maxRel = d.maxRel;
            if (d.shapeMismatch) c.reason = "shape or type differs";
            return c;
        }
        c.maxAbs = std::max(c.maxAbs, d.maxAbs);
        c.maxRel = std::max(c.maxRel, d.maxRel);
    }
    return c;
}

StepVerifier::StepVerifier(const ir::Model& input, std::vector<std::pair<std::string, int64_t>> dims,
                           const std::atomic<bool>* cancel, uint64_t seed)
    : inputModel_(input) {
    options_.dims = std::move(dims);
    options_.cancel = cancel;
    try {
        pinnedToOne_ = unpinnedDims(input, options_.dims);
        inputs_ = randomInputs(input, seed, options_.dims);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Cancelled) throw;
        input_.reason = e.what();
        return;
    }
    std::string why;
    if (!runModel(input, inputOutputs_, why)) {
        input_.reason = why;
        return;
    }
    input_.status = OutputCheck::Status::Match;
    previous_ = inputOutputs_;
}

bool StepVerifier::runModel(const ir::Model& m, std::vector<ir::TensorPtr>& out, std::string& whyNot) const {
    if (!isModelSupported(m, &whyNot)) return false;
    try {
        out = run(m, inputs_, options_);
        return true;
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Cancelled) throw;
        whyNot = e.what();
    } catch (const std::exception& e) {
        whyNot = e.what();
    }
    return false;
}

StepVerifier::StepCheck StepVerifier::check(const ir::Model& m) {
    StepCheck c;
    if (input_.status == OutputCheck::Status::NotRun) {
        c.vsPrevious.reason = c.vsInput.reason = "the input model does not run: " + input_.reason;
        return c;
    }
    std::vector<ir::TensorPtr> got;
    std::string why;
    if (!runModel(m, got, why)) {
        c.vsPrevious.reason = c.vsInput.reason = why;
        // The next step is compared with the last model that ran.
        return c;
    }
    c.vsPrevious = checkOutputs(inputModel_, got, previous_);
    c.vsInput = checkOutputs(inputModel_, got, inputOutputs_);
    previous_ = std::move(got);
    return c;
}

}  // namespace passlens::eval
