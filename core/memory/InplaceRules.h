#pragma once
// Which ops may write their output over an input (elementwise: output element i depends only on
// input element i, so overwriting as you go is safe). A small table owned by the memory planner
// until a shared op registry exists.
#include <string>

namespace passlens::memory {

/// True when `opType` (domain "" / ai.onnx) is elementwise and may run in place on an input of
/// the output's size and element type.
bool isInplaceElementwise(const std::string& domain, const std::string& opType);

}  // namespace passlens::memory
