#pragma once
// IR → ONNX.
#include <cstddef>
#include <string>

#include "ir/Model.h"

namespace onnx { class ModelProto; }

namespace passlens::onnxio {

struct ExportOptions {
    /// When set, tensors of at least `externalThreshold` bytes go to this file (a name relative to
    /// the model's folder), as ONNX external data.
    std::string externalDataFile;
    size_t externalThreshold = 1024;
    bool writeValueInfo = true;     ///< value_info for every typed intermediate value
};

void exportToProto(const ir::Model& m, onnx::ModelProto& out);
/// Writes `path` (and the external-data file beside it when asked). Throws Error on I/O failure.
void exportModelFile(const ir::Model& m, const std::string& path, const ExportOptions& options = {});
std::string exportModelBytes(const ir::Model& m);

}  // namespace passlens::onnxio
