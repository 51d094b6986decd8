#pragma once
// Import-time validation against libonnx's op schemas, so that every later stage (passes,
// analyses, the interpreter, the app) may assume what the schema promises: input and output
// counts within bounds, required attributes present and typed as declared, attribute values that
// fit the input's rank, and model-local functions that are called with a fitting arity and never
// call themselves. Ops of custom domains without a schema are left alone.
#include <cstdint>
#include <string>
#include <unordered_map>

namespace onnx {
class ModelProto;
}

namespace passlens::ir {
struct Model;
struct Node;
}

namespace passlens::onnxio {

/// Opset version per domain ("" = ai.onnx), as the model imports them.
using OpsetMap = std::unordered_map<std::string, int64_t>;

/// Checks every node of the main graph, its subgraphs and every function body against its schema,
/// every call of a model-local function against the function's signature, and the function call
/// graph for recursion. Throws BadInput: "node 'erf1' (Erf): 0 inputs, the schema takes 1".
void validateAgainstSchemas(const onnx::ModelProto& mp, const OpsetMap& opsets);

/// Only the model-local function checks (call arity, no recursion); import runs them even when op
/// validation is off, because libonnx's shape inference recurses without end on a recursive function.
void validateFunctionCalls(const onnx::ModelProto& mp);

/// For pattern matchers: true when a default-domain node has at least the inputs and outputs its
/// op's schema requires in every opset, and its required inputs and first output are present.
/// Ops without a schema pass. Import already enforces this; graphs built in code may not.
bool fitsSchemaEnvelope(const ir::Node& n);

/// After conversion (types known): axis and permutation attributes must fit the input's rank.
/// Throws BadInput: "node 'transpose1' (Transpose): perm [0, 7] is not a permutation of 0..1".
void validateAttributeValues(const ir::Model& m);

}  // namespace passlens::onnxio
