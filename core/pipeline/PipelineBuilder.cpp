#include "pipeline/PipelineBuilder.h"

#include "ir/Error.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "pipeline/PipelineText.h"

namespace passlens::passes {

bool isOnnxRuntimeProfile(const std::string& profile) {
    if (profile == "standard") return false;
    if (profile == "onnxruntime") return true;
    throwBadInput("unknown profile '" + profile + "'; valid profiles: standard, onnxruntime");
}

Level onnxRuntimeLevel(const std::string& level) {
    if (level == "basic") return Level::Basic;
    if (level == "extended") return Level::Extended;
    throwBadInput("--profile onnxruntime has levels basic and extended (ONNX Runtime's Level1 and Level2), not '" + level + "'");
}

namespace {

/// addPipeline, with an error naming the option the text came from ("--pipeline: unknown pass 'x'; ...").
void addPipelineFrom(const char* option, PassManager& pm, const std::string& text) {
    try {
        addPipeline(pm, text);
    } catch (const Error& e) {
        throw Error(e.kind(), std::string(option) + ": " + e.what());
    }
}

}  // namespace

void buildPipeline(const PipelineRequest& r, PassManager& pm, PassOptions& options) {
    const bool onnxRuntime = isOnnxRuntimeProfile(r.profile.value_or("standard"));
    if (r.pipeline && (r.level || r.passes || onnxRuntime))
        throwBadInput("--pipeline is the whole pipeline: it does not combine with --level, --passes or --profile onnxruntime");
    // --target-opset: version-convert runs first, so every later pass sees the new opset (and
    // --verify, the report and the change log cover the conversion like any pass).
    if (r.targetOpset) {
        options.targetOpset = *r.targetOpset;
        pm.addPass("version-convert");
    }
    // The onnxruntime profile is ONNX Runtime's transformer list at its level; otherwise
    // --pipeline, then an explicit --passes list (before --level if both), then --level.
    if (r.pipeline) {
        addPipelineFrom("--pipeline", pm, *r.pipeline);
    } else if (onnxRuntime) {
        if (r.passes) throwBadInput("--passes and --profile onnxruntime do not combine (the profile is its pass list)");
        for (const auto& name : ort::profilePipeline(onnxRuntimeLevel(r.level.value_or(r.defaultLevel)))) pm.addPass(name);
    } else if (r.passes) {
        addPipelineFrom("--passes", pm, *r.passes);
        if (r.level) pm.addLevel(parseLevel(*r.level));
    } else {
        pm.addLevel(parseLevel(r.level.value_or(r.defaultLevel)));
    }
    // An argument that selects work adds its pass unless the pipeline already has it (no level
    // runs `layout` or `recompute`, so the argument alone used to change nothing).
    if (r.targetLayout) {
        if (*r.targetLayout != "NHWC" && *r.targetLayout != "NCHW") throwBadInput("--target-layout must be NHWC or NCHW");
        options.targetLayout = *r.targetLayout;
        // `transpose` cancels the Transposes `layout` puts around each converted op.
        if (!pm.contains("layout")) {
            pm.addPass("layout");
            pm.addPass("transpose");
        }
    }
    if (r.recompute) {
        options.params["recompute.strategy"] = *r.recompute;
        if (!pm.contains("recompute")) pm.addPass("recompute");
    }
    if (r.groupFunctions) pm.addPass("group-functions");
}

}  // namespace passlens::passes
