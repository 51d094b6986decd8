#pragma once
// --profile: which optimizer the pipeline reproduces. "standard" (the default) is PassLens's own
// standard-ONNX pipeline (--level none|basic|extended|all); "onnxruntime" is ONNX Runtime 1.30's
// CPU graph transformers (--level basic|extended, core/passes/onnxruntime).
#include <optional>
#include <string>

#include "cli/Command.h"
#include "passes/PassManager.h"
#include "passes/onnxruntime/OrtPasses.h"

namespace passlens::cli {

/// True for --profile onnxruntime, false for standard (or no --profile); a usage error naming the
/// valid profiles otherwise.
inline bool onnxRuntimeProfile(const Args& args) {
    const std::string p = args.option("--profile").value_or("standard");
    if (p == "standard") return false;
    if (p == "onnxruntime") return true;
    throw UsageError{"unknown profile '" + p + "'; valid profiles: standard, onnxruntime"};
}

/// The onnxruntime profile's level from --level (default `dflt`): basic or extended only.
inline passes::Level onnxRuntimeLevel(const Args& args, const std::string& dflt) {
    const std::string l = args.option("--level").value_or(dflt);
    if (l == "basic") return passes::Level::Basic;
    if (l == "extended") return passes::Level::Extended;
    throw UsageError{"--profile onnxruntime has levels basic and extended (ONNX Runtime's Level1 and Level2), not '" + l + "'"};
}

/// Appends the onnxruntime profile's passes for `level`.
inline void addOnnxRuntimePasses(passes::PassManager& pm, passes::Level level) {
    for (const auto& name : passes::ort::profilePipeline(level)) pm.addPass(name);
}

}  // namespace passlens::cli
