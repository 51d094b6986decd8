#include "eval/Verify.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "eval/TensorOps.h"
#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

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

OutputCheck runForCheck(const ir::Model& m, const std::vector<ir::TensorPtr>& inputs, const RunOptions& options,
                        std::vector<ir::TensorPtr>& out) {
    OutputCheck c;
    if (!isModelSupported(m, &c.reason)) return c;
    try {
        out = run(m, inputs, options);
        c.status = OutputCheck::Status::Match;
        return c;
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Cancelled) throw;
        c.reason = e.what();
        // An op the capability check could not rule out (an element type) is not the model's fault.
        if (e.kind() == ErrorKind::Unsupported) return c;
    } catch (const std::exception& e) {
        c.reason = e.what();
    }
    c.status = OutputCheck::Status::Differ;
    c.reason = "fails to run: " + c.reason;
    return c;
}

StepVerifier::StepVerifier(const ir::Model& input, std::vector<std::pair<std::string, int64_t>> dims,
                           const std::atomic<bool>* cancel, uint64_t seed)
    : inputModel_(input) {
    options_.dims = std::move(dims);
    options_.cancel = cancel;
    try {
        pinnedToOne_ = unpinnedDims(input, options_.dims);
        inputs_ = randomInputs(input, seed, options_.dims, InputRanges::Natural);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Cancelled) throw;
        input_.reason = e.what();
        return;
    }
    input_ = runForCheck(input, inputs_, options_, inputOutputs_);
    if (input_.status != OutputCheck::Status::Match) {
        // The reference itself failing is no step's fault: nothing can be checked.
        input_.status = OutputCheck::Status::NotRun;
        inputOutputs_.clear();
        return;
    }
    previous_ = inputOutputs_;
}

StepVerifier::StepCheck StepVerifier::check(const ir::Model& m) {
    StepCheck c;
    if (input_.status == OutputCheck::Status::NotRun) {
        c.vsPrevious.reason = c.vsInput.reason = "the input model does not run: " + input_.reason;
        return c;
    }
    std::vector<ir::TensorPtr> got;
    const OutputCheck ran = runForCheck(m, inputs_, options_, got);
    if (ran.status != OutputCheck::Status::Match) {
        c.vsPrevious = c.vsInput = ran;
        // The next step is compared with the last model that ran.
        return c;
    }
    c.vsPrevious = checkOutputs(inputModel_, got, previous_);
    c.vsInput = checkOutputs(inputModel_, got, inputOutputs_);
    previous_ = std::move(got);
    return c;
}

std::vector<VerifyInput> verifyInputs(const ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& dims) {
    std::vector<VerifyInput> out;
    for (uint64_t seed : kVerifySeeds)
        out.push_back({"seed " + std::to_string(seed), randomInputs(m, seed, dims, InputRanges::Natural)});
    out.push_back({"seed 0, uniform", randomInputs(m, 0, dims, InputRanges::Uniform)});
    return out;
}

std::vector<std::string> degenerateOutputs(const ir::Model& ref,
                                           const std::vector<std::vector<ir::TensorPtr>>& outputsPerRun) {
    std::vector<std::string> out;
    const auto& outs = ref.graph.outputs();
    const std::string runs = std::to_string(outputsPerRun.size()) + (outputsPerRun.size() == 1 ? " input" : " inputs");
    for (size_t i = 0; i < outs.size(); ++i) {
        bool anyElement = false, oneValue = true, first = true;
        double value = 0;
        std::vector<std::string> strings;
        for (const auto& run : outputsPerRun) {
            if (i >= run.size() || !run[i]) continue;
            const ir::Tensor& t = *run[i];
            if (t.dtype == ir::DataType::String) {
                for (const auto& s : t.strings) {
                    anyElement = true;
                    if (strings.empty()) strings.push_back(s);
                    else if (s != strings[0]) oneValue = false;
                }
                continue;
            }
            for (double x : toDoubles(t)) {
                anyElement = true;
                if (first) value = x, first = false;
                else if (!(x == value || (std::isnan(x) && std::isnan(value)))) oneValue = false;
            }
        }
        const std::string name = "output '" + ref.graph.value(outs[i]).name + "'";
        if (!anyElement) out.push_back(name + " is empty on all " + runs);
        else if (oneValue) {
            std::ostringstream v;
            if (strings.empty()) v << value;
            else v << "\"" << strings[0] << "\"";
            out.push_back(name + " has every element equal (" + v.str() + ") on all " + runs);
        }
    }
    return out;
}

ir::Model writtenForm(const ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& dims) {
    onnxio::ImportOptions io;
    io.pinnedDims = dims;
    return onnxio::importModelBytes(onnxio::exportModelBytes(m), "", io);
}

namespace {

std::string describe(const OutputCheck& c) {
    std::ostringstream s;
    if (!c.output.empty()) s << "output '" << c.output << "' ";
    if (!c.reason.empty()) s << c.reason;
    else s << "differs (max abs " << c.maxAbs << ", max rel " << c.maxRel << ")";
    return s.str();
}

std::string inputList(const std::vector<VerifyInput>& inputs) {
    std::string s;
    for (const auto& in : inputs) s += (s.empty() ? "" : "; ") + in.label;
    return s;
}

}  // namespace

PipelineVerifier::PipelineVerifier(const ir::Model& original, std::vector<std::pair<std::string, int64_t>> dims,
                                   const std::atomic<bool>* cancel)
    : original_(original), perPass_(original, dims, cancel, kVerifySeeds[0]) {
    options_.dims = std::move(dims);
    options_.cancel = cancel;
    originalRun_ = perPass_.inputCheck();
    if (originalRun_.status != OutputCheck::Status::Match) return;
    inputs_ = verifyInputs(original, options_.dims);
    reference_.push_back(perPass_.inputOutputs());  // inputs_[0] is the step input: same seed and ranges
    for (size_t i = 1; i < inputs_.size(); ++i) {
        std::vector<ir::TensorPtr> out;
        auto ran = runForCheck(original, inputs_[i].tensors, options_, out);
        if (ran.status != OutputCheck::Status::Match) {
            originalRun_ = ran;
            originalRun_.status = OutputCheck::Status::NotRun;
            originalRun_.reason = "on input " + inputs_[i].label + ": " + ran.reason;
            return;
        }
        reference_.push_back(std::move(out));
    }
}

std::string PipelineVerifier::afterPass(const std::string& pass, const ir::Model& m) {
    if (!firstBadPass_.empty() || originalRun_.status != OutputCheck::Status::Match) return "";
    const auto c = perPass_.check(m).vsInput;
    if (c.status != OutputCheck::Status::Differ) return "";
    firstBadPass_ = pass;
    return "verify: after pass '" + pass + "' " + describe(c) + " on input " + inputs_[0].label;
}

std::string PipelineVerifier::firstBadStep(size_t input, const Steps& steps) const {
    for (const auto& [pass, model] : steps) {
        std::vector<ir::TensorPtr> got;
        OutputCheck c;
        try {
            c = runForCheck(writtenForm(*model, options_.dims), inputs_[input].tensors, options_, got);
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::Cancelled) throw;
            return pass;  // cannot be written and read back
        }
        if (c.status == OutputCheck::Status::Match) c = checkOutputs(original_, got, reference_[input]);
        if (c.status == OutputCheck::Status::Differ) return pass;
    }
    return "";
}

PipelineVerifier::Result PipelineVerifier::checkWrittenFile(const std::string& path, const Steps& steps) {
    onnxio::ImportOptions io;
    io.pinnedDims = options_.dims;
    std::optional<ir::Model> written;
    try {
        written = onnxio::importModelFile(path, io);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Cancelled) throw;
        return check(nullptr, e.what(), steps);
    }
    return check(&*written, "", steps);
}

PipelineVerifier::Result PipelineVerifier::checkWritten(const ir::Model& written, const Steps& steps) {
    return check(&written, "", steps);
}

PipelineVerifier::Result PipelineVerifier::check(const ir::Model* written, const std::string& whyUnreadable,
                                                 const Steps& steps) {
    Result r;
    r.firstBadPass = firstBadPass_;
    if (originalRun_.status != OutputCheck::Status::Match) {
        r.lines.push_back("verify: not verified: the original model does not run in the interpreter: " + originalRun_.reason);
        return r;
    }
    auto blame = [&](size_t input) {
        if (r.firstBadPass.empty()) r.firstBadPass = firstBadStep(input, steps);
        r.lines.push_back(r.firstBadPass.empty()
                              ? std::string("verify failed: no pass's model differs on that input; the difference "
                                            "comes from writing the file")
                              : "verify failed: first differing pass is '" + r.firstBadPass + "'");
        return r;
    };
    if (!written) {
        r.verdict = Verdict::Differ;
        r.lines.push_back("verify failed: the written file cannot be read back: " + whyUnreadable);
        return blame(0);
    }
    // The written model on every input; the first difference decides.
    for (size_t i = 0; i < inputs_.size(); ++i) {
        std::vector<ir::TensorPtr> got;
        auto c = runForCheck(*written, inputs_[i].tensors, options_, got);
        if (c.status == OutputCheck::Status::NotRun) {
            r.lines.push_back("verify: not verified: the written model does not run in the interpreter: " + c.reason);
            if (!firstBadPass_.empty()) {
                r.verdict = Verdict::Differ;
                r.lines.push_back("verify failed: first differing pass is '" + firstBadPass_ + "'");
            }
            return r;
        }
        if (c.status == OutputCheck::Status::Match) c = checkOutputs(original_, got, reference_[i]);
        if (c.status == OutputCheck::Status::Differ) {
            r.verdict = Verdict::Differ;
            r.lines.push_back("verify failed: the written file " + describe(c) + " on input " + inputs_[i].label);
            return blame(i);
        }
    }
    if (!firstBadPass_.empty()) {
        // A pass broke the outputs and a later one restored them on these inputs: still a bug.
        r.verdict = Verdict::Differ;
        r.firstBadPass = firstBadPass_;
        r.lines.push_back("verify failed: first differing pass is '" + firstBadPass_ +
                          "' (the written file matches on every input, a later pass undid it)");
        return r;
    }
    const auto degenerate = degenerateOutputs(original_, reference_);
    for (const auto& d : degenerate) r.lines.push_back("verify: not verified: " + d);
    std::ostringstream tol;
    tol << "rtol " << kVerifyRtol << ", atol " << kVerifyAtol;
    if (degenerate.size() == original_.graph.outputs().size()) {
        r.lines.push_back("verify: not verified: no output of the original varies on these inputs (" +
                          inputList(inputs_) + ")");
        return r;
    }
    r.verdict = Verdict::Match;
    r.lines.push_back("verify: outputs match the original after every pass (input " + inputs_[0].label +
                      ") and in the written file (inputs " + inputList(inputs_) + "; " + tol.str() + ")" +
                      (degenerate.empty() ? "" : ", except the outputs not verified above"));
    return r;
}

}  // namespace passlens::eval
