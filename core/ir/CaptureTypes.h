#pragma once
// A subgraph's outer-scope capture is the enclosing graph's value of the same name, so it has that
// value's type. Shape inference types the enclosing graph well (the symbolic engine fills in what
// libonnx leaves unknown) but a body's captures poorly; this copies what the definition knows.
#include <cstddef>

#include "ir/Graph.h"

namespace passlens::ir {

/// Fills each capture's type (in every subgraph under `g`, at any depth) from its definition where
/// the capture's own type says less: an unknown type, no rank, or unknown dims. Never replaces a
/// known dim. Returns how many captures changed.
size_t copyCaptureTypes(Graph& g);

}  // namespace passlens::ir
