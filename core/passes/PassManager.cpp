#include "passes/PassManager.h"

#include "onnx/ShapeInference.h"
#include "passes/PassRegistry.h"

namespace passlens::passes {

PipelineResult runPipeline(ir::Model& model, const std::vector<std::string>& passNames, const PipelineOptions& options) {
    PipelineResult result;
    std::vector<std::unique_ptr<Pass>> passes;
    for (const auto& n : passNames) passes.push_back(PassRegistry::instance().create(n));
    if (options.keepSnapshots) result.snapshots.push_back({"input", std::make_shared<const ir::Model>(model)});
    const int iterations = options.fixedPoint ? std::max(1, options.maxIterations) : 1;
    size_t done = 0, total = passes.size() * static_cast<size_t>(iterations);
    for (int it = 0; it < iterations; ++it) {
        bool anyChange = false;
        for (const auto& pass : passes) {
            if (options.progress) options.progress(done, total, pass->name());
            PassResult r = pass->run(model, options.pass);
            if (r.changed) {
                // Later rules read shapes: refresh them after every change.
                for (const auto& w : onnxio::inferShapes(model)) (void)w;
                anyChange = true;
            }
            if (it > 0) r.name += " #" + std::to_string(it + 1);
            if (options.keepSnapshots) result.snapshots.push_back({r.name, std::make_shared<const ir::Model>(model)});
            if (options.verifyAfterEach && !result.firstMismatch) {
                if (auto msg = options.verifyAfterEach(model)) {
                    result.firstMismatch = result.passes.size();
                    result.mismatchMessage = *msg;
                }
            }
            result.passes.push_back(std::move(r));
            ++done;
        }
        if (!anyChange) break;
    }
    if (options.progress) options.progress(total, total, "");
    return result;
}

}  // namespace passlens::passes
