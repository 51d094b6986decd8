#pragma once
// libonnx shape inference applied to an IR model: export, infer, copy the types back by name.
// Used after import-time construction (builders, examples) and after passes rewrite the graph.
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/Model.h"

namespace passlens::onnxio {

/// Fills in value types (top-level graph and subgraphs). Returns warnings; never throws for
/// inference failures (a failing node is named in the warning). `symbolic` then refines the types
/// with core/shape's engine (dims libonnx leaves unknown: shape arithmetic on symbols).
std::vector<std::string> inferShapes(ir::Model& m, bool symbolic = true);

/// The value types ONNX Runtime's graph holds for `m`: every value a node computes (subgraphs too)
/// forgets its dims and gets them again from libonnx's inference alone, without data propagation
/// and without the symbolic engine, as ONNX Runtime's Graph::Resolve infers them (it implements no
/// partial data propagation: a Reshape to a computed target has no shape there). Element types
/// stay, and so do the types of contrib ops' outputs (ONNX Runtime has the schemas libonnx lacks).
std::vector<std::string> resetToOnnxInferredShapes(ir::Model& m);

/// libonnx's inference alone (no symbolic refinement, no data propagation) on an export of `m`
/// whose value_info is only `pinned` (value name → type): the types it gives the top-level
/// graph's values and outputs, by name. nullopt when libonnx throws. Leaves `m` as it is.
std::optional<std::unordered_map<std::string, ir::TypeInfo>> libonnxTypesWithPins(
    const ir::Model& m, const std::vector<std::pair<std::string, ir::TypeInfo>>& pinned);

}  // namespace passlens::onnxio
