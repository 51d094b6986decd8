#pragma once
// libonnx shape inference applied to an IR model: export, infer, copy the types back by name.
// Used after import-time construction (builders, examples) and after passes rewrite the graph.
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::onnxio {

/// Fills in value types (top-level graph and subgraphs). Returns warnings; never throws for
/// inference failures (a failing node is named in the warning). `symbolic` then refines the types
/// with core/shape's engine (dims libonnx leaves unknown: shape arithmetic on symbols).
std::vector<std::string> inferShapes(ir::Model& m, bool symbolic = true);

}  // namespace passlens::onnxio
