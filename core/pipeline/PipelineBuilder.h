#pragma once
// The one place that turns optimize's arguments into a pipeline: `passlens-cli optimize`'s options
// and the Python module's optimize() arguments both fill a PipelineRequest, so a model optimized
// by either is the same file.
#include <cstdint>
#include <optional>
#include <string>

#include "passes/PassManager.h"

namespace passlens::passes {

struct PipelineRequest {
    std::optional<std::string> pipeline;  ///< --pipeline TEXT: the whole pipeline (pipeline/PipelineText.h)
    std::optional<std::string> level;     ///< --level none|basic|extended|all
    std::optional<std::string> passes;    ///< --passes TEXT: run before --level when both are given
    std::optional<std::string> profile;   ///< --profile standard|onnxruntime
    std::string defaultLevel = "basic";   ///< the level when nothing names one (the CLI: basic, Python: extended)
    std::optional<int64_t> targetOpset;   ///< version-convert first
    std::optional<std::string> targetLayout;  ///< NHWC|NCHW: layout + transpose unless the pipeline has layout
    std::optional<std::string> recompute;     ///< the recompute strategy: recompute unless the pipeline has it
    bool groupFunctions = false;              ///< group-functions last
};

/// Appends the passes `request` asks for to `pm` and sets the options they read. Throws BadInput
/// naming the argument: an unknown profile, level, pass or option, a bad value, or --pipeline
/// combined with --level, --passes or --profile onnxruntime.
void buildPipeline(const PipelineRequest& request, PassManager& pm, PassOptions& options);

/// "standard" → false, "onnxruntime" → true; BadInput naming the valid profiles otherwise.
bool isOnnxRuntimeProfile(const std::string& profile);
/// The onnxruntime profile's levels: basic or extended (BadInput otherwise).
Level onnxRuntimeLevel(const std::string& level);

}  // namespace passlens::passes
