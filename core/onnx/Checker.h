#pragma once
// The ONNX checker (libonnx) on an IR model.
#include <optional>
#include <string>

#include "ir/Model.h"

namespace passlens::onnxio {

/// Runs onnx::checker::check_model on the exported model (full check, local functions included).
/// Returns the checker's message on failure, nullopt when the model is valid.
std::optional<std::string> checkModel(const ir::Model& m);
/// Same, on a file as it is on disk.
std::optional<std::string> checkModelFile(const std::string& path);

}  // namespace passlens::onnxio
