#include "passes/PassManager.h"

#include "onnx/ShapeInference.h"

namespace passlens::passes {

void PassManager::addPass(const std::string& name) { passes_.push_back(registry_.create(name)); }
void PassManager::addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
void PassManager::addLevel(Level level) {
    for (const auto& n : registry_.pipeline(level)) addPass(n);
}

PipelineResult PassManager::run(ir::Model& model, const PipelineOptions& options) const {
    PipelineResult out;
    if (options.keepSnapshots) out.initial = std::make_shared<const ir::Model>(model);
    int maxIter = options.fixedPoint ? std::max(1, options.maxIterations) : 1;
    for (int it = 0; it < maxIter; ++it) {
        bool changed = false;
        for (const auto& pass : passes_) {
            PipelineStep step;
            step.iteration = it;
            step.result = pass->run(model, options.pass);
            if (step.result.changed && options.inferShapesAfterEachPass) {
                try { onnxio::inferShapes(model); } catch (...) { /* shapes stay as they were */ }
            }
            changed |= step.result.changed;
            if (options.keepSnapshots) step.snapshot = std::make_shared<const ir::Model>(model);
            if (options.afterPass) options.afterPass(step.result, model);
            out.steps.push_back(std::move(step));
        }
        out.iterations = it + 1;
        if (!changed) break;
    }
    return out;
}

}  // namespace passlens::passes
