#include "stepper/PipelineJob.h"


#include <optional>

#include "ir/Error.h"

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
        for (const auto& n : passNames) {
            // "layout:NHWC" runs the layout pass toward that layout (as --target-layout);
            // "version-convert:17" upgrades the opset (as --target-opset).
            if (auto colon = n.find(':'); colon != std::string::npos) {
                const std::string pass = n.substr(0, colon), arg = n.substr(colon + 1);
                if (pass == "layout") {
                    opt.pass.targetLayout = arg;
                } else if (pass == "version-convert") {
                    try { opt.pass.targetOpset = std::stoll(arg); } catch (...) {
                        throw Error(ErrorKind::BadInput, "version-convert needs an opset number: '" + n + "'");
                    }
                } else {
                    throw Error(ErrorKind::BadInput, "only layout and version-convert take an argument: '" + n + "'");
                }
                pm.addPass(pass);
            } else {
                pm.addPass(n);
            }
        }
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
