#include "stepper/PipelineJob.h"


#include <optional>

#include "ir/Error.h"
#include "pipeline/PipelineText.h"

namespace passlens::ui {

std::shared_ptr<const ir::Model> PipelineRun::modelAt(int row) const {
    if (!result || row < 0 || row >= rowCount()) return nullptr;
    return row == 0 ? result->initial : result->steps[size_t(row - 1)].snapshot;
}

const passes::PipelineStep* PipelineRun::stepAt(int row) const {
    if (!result || row < 1 || row >= rowCount()) return nullptr;
    return &result->steps[size_t(row - 1)];
}

int PipelineRun::firstDifferingRow() const {
    for (size_t row = 1; row < verification.size(); ++row)
        if (verification[row].vsPrevious.status == eval::OutputCheck::Status::Differ) return int(row);
    return -1;
}

PipelineRun runPipeline(const ir::Model& model, const std::vector<std::string>& passNames,
                        const std::atomic<bool>* cancel, const std::function<void(int, int)>& progress,
                        bool verifyOutputs, const std::vector<std::pair<std::string, int64_t>>& verifyDims,
                        const passes::PassRegistry& registry) {
    PipelineRun run;
    run.passNames = passNames;
    try {
        passes::PassManager pm(registry);
        passes::PipelineOptions opt;
        // Each name is pipeline text (core's syntax): "layout:NHWC", "version-convert{opset=17}".
        for (const auto& n : passNames) passes::addPipeline(pm, n);
        ir::Model work = model;  // the loaded model stays as it was
        opt.pass.cancel = cancel;
        opt.keepSnapshots = true;
        int done = 0;
        const int total = int(passNames.size());
        // Verification runs the input model once here, then each snapshot in afterPass.
        std::optional<eval::StepVerifier> verifier;
        std::vector<eval::StepVerifier::StepCheck> checks;
        if (verifyOutputs) {
            verifier.emplace(model, verifyDims, cancel);
            checks.push_back({verifier->inputCheck(), verifier->inputCheck()});
        }
        opt.afterPass = [&](const passes::PassResult&, const ir::Model& now) {
            if (cancel && cancel->load()) throw Error(ErrorKind::Cancelled, "cancelled");
            if (verifier) checks.push_back(verifier->check(now));
            if (progress) progress(++done, total);
            if (cancel && cancel->load()) throw Error(ErrorKind::Cancelled, "cancelled");
        };
        run.result = std::make_shared<const passes::PipelineResult>(pm.run(work, opt));
        if (verifier) {
            run.verification = std::move(checks);
            run.pinnedToOne = verifier->pinnedToOne();
        }
    } catch (const Error& e) {
        run.cancelled = e.kind() == ErrorKind::Cancelled;
        if (!run.cancelled) run.error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
        run.error = QString::fromStdString(e.what());
    }
    return run;
}

}  // namespace passlens::ui
