#pragma once
// Sizes the planner needs but shape inference could not give: libonnx does not read the payload of
// a Constant node feeding Reshape/Expand/..., so their outputs stay rank-unknown. Inferring on a
// copy whose Constant nodes are lifted into initializers makes those sizes known; only the types
// come back to the original (its nodes, order and ids are untouched).
#include "ir/Model.h"

namespace passlens::memory {

/// Fills unknown tensor types of the top-level graph from inference on a Constant-lifted copy.
/// Returns how many values gained a fully static shape.
int completeShapesViaLiftedConstants(ir::Model& m);

}  // namespace passlens::memory
