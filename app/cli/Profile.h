#pragma once
// --profile: which optimizer the pipeline reproduces. "standard" (the default) is PassLens's own
// standard-ONNX pipeline (--level none|basic|extended|all); "onnxruntime" is ONNX Runtime 1.30's
// CPU graph transformers (--level basic|extended, core/passes/onnxruntime). The checks are core's
// (pipeline/PipelineBuilder.h), which `optimize` and the Python module use.
#include <string>

#include "cli/Command.h"
#include "passes/PassManager.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "pipeline/PipelineBuilder.h"

namespace passlens::cli {

/// True for --profile onnxruntime, false for standard (or no --profile); BadInput naming the
/// valid profiles otherwise.
inline bool onnxRuntimeProfile(const Args& args) {
    return passes::isOnnxRuntimeProfile(args.option("--profile").value_or("standard"));
}

/// The onnxruntime profile's level from --level (default `dflt`): basic or extended only.
inline passes::Level onnxRuntimeLevel(const Args& args, const std::string& dflt) {
    return passes::onnxRuntimeLevel(args.option("--level").value_or(dflt));
}

/// Appends the onnxruntime profile's passes for `level`.
inline void addOnnxRuntimePasses(passes::PassManager& pm, passes::Level level) {
    for (const auto& name : passes::ort::profilePipeline(level)) pm.addPass(name);
}

}  // namespace passlens::cli
