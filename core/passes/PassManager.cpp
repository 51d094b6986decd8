#include "passes/PassManager.h"

#include "onnx/ShapeInference.h"

namespace passlens::passes {

namespace {

/// Shape inference re-exports the whole model, so it only runs after a pass that may have left a
/// value with a stale or missing type, or made a new constant from which inference can learn
/// static shapes downstream. Passes that declare preservesValueTypes() (algebraic, cse, dce) are
/// skipped unless they folded a constant (a test checks that skipping them changes nothing).
bool needsShapeInference(const Pass& pass, const PassResult& r, const ir::Model& model, ir::ValueId valueLimitBefore) {
    if (!r.changed) return false;
    if (!pass.preservesValueTypes()) return true;
    for (const Change& c : r.changes)
        if (c.kind == ChangeKind::Folded) return true;
    // Safety net: a value the pass created (ids are never reused) that has no type yet.
    const ir::Graph& g = model.graph;
    for (ir::ValueId v = valueLimitBefore; v < g.valueIdLimit(); ++v)
        if (g.hasValue(v) && g.value(v).producer != ir::kNone && !g.value(v).type.known()) return true;
    return false;
}

}  // namespace

void PassManager::addPass(const std::string& name, const PassArgs& args) { addPass(registry_.create(name), args); }
void PassManager::addPass(std::unique_ptr<Pass> pass, const PassArgs& args) {
    PassOptions checked;
    applyPassArgs(*pass, args, checked);  // a bad option fails now, not when the pipeline reaches it
    passes_.push_back(std::move(pass));
    args_.push_back(args);
}
bool PassManager::contains(const std::string& name) const {
    for (const auto& p : passes_)
        if (p->name() == name) return true;
    return false;
}
void PassManager::addLevel(Level level) {
    for (const auto& n : registry_.pipeline(level)) addPass(n);
}

PipelineResult PassManager::run(ir::Model& model, const PipelineOptions& options) const {
    PipelineResult out;
    if (options.keepSnapshots) out.initial = std::make_shared<const ir::Model>(model);
    for (ir::NodeId n : model.graph.nodeOrder()) out.originalNodeNames.emplace(n, model.graph.node(n).displayName());
    int maxIter = options.fixedPoint ? std::max(1, options.maxIterations) : 1;
    for (int it = 0; it < maxIter; ++it) {
        bool changed = false;
        for (size_t i = 0; i < passes_.size(); ++i) {
            const Pass* pass = passes_[i].get();
            PassOptions own;
            if (!args_[i].empty()) {
                own = options.pass;
                applyPassArgs(*pass, args_[i], own);
            }
            PipelineStep step;
            step.iteration = it;
            const ir::ValueId valueLimit = model.graph.valueIdLimit();
            step.result = pass->run(model, args_[i].empty() ? options.pass : own);
            if (options.inferShapesAfterEachPass && needsShapeInference(*pass, step.result, model, valueLimit)) {
                // The shapes stay as they were; the failure is a missed remark on the step (the
                // pass's own result is already complete, so it cannot be lost by rethrowing).
                try {
                    onnxio::inferShapes(model);
                } catch (const std::exception& e) {
                    Remark r;
                    r.kind = RemarkKind::Missed;
                    r.pass = step.result.name;
                    r.rule = "shape-inference";
                    r.message = "shape inference after the pass failed, value types stay as they were: " + std::string(e.what());
                    step.result.remarks.push_back(std::move(r));
                }
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
