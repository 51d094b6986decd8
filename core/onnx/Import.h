#pragma once
// ONNX → IR. Everything in the file comes back out on export: doc strings, metadata, value_info,
// custom domains, functions, training info. Initializer payloads are moved, never copied; external
// data is memory-mapped relative to the model's folder.
#include <string>
#include <string_view>
#include <vector>

#include "ir/Model.h"

namespace passlens::onnxio {

struct ImportOptions {
    bool inferShapes = true;        ///< run libonnx shape inference (warnings on failure, never fatal)
    bool validateOps = true;        ///< unknown ops/domains and too-new opsets are errors
    bool verify = true;             ///< run the IR verifier (cycles, undefined reads, ...)
    std::vector<std::pair<std::string, int64_t>> pinnedDims;  ///< --dim NAME=VALUE on graph inputs
};

/// Loads a model file. Throws passlens::Error(BadInput) with a one-line message naming the
/// problem (and node) on any malformed input.
ir::Model importModelFile(const std::string& path, const ImportOptions& options = {});
/// Loads from bytes already in memory; `baseDir` resolves external data.
ir::Model importModelBytes(std::string_view bytes, const std::string& baseDir, const ImportOptions& options = {});

/// True for an import error that says only that this build does not know an op, an opset or an IR
/// version ("unknown operator 'X'", "newer than the 23 this build knows"): such a file is otherwise
/// well formed, and the app can still show it read-only (ImportOptions::validateOps off).
bool isUnknownOpError(const std::string& message);

/// Replaces symbolic dims named in `pins` on the graph inputs (then shapes can be re-inferred).
void pinDims(ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& pins);

}  // namespace passlens::onnxio
