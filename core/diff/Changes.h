#pragma once
// What differs between two matched nodes, in words. Names never count: a node is `changed` only
// when its op, its attributes or the values of its constant inputs differ.
#include <string>
#include <vector>

#include "diff/Fingerprint.h"

namespace passlens::diff {

/// "op Conv → com.microsoft.FusedConv", "attribute alpha 0.1 → 0.2", "attribute axis removed (was 1)",
/// "input 1 values differ: max |Δ| 0.013", "input 1 float32[64] → float32[32]", "inputs 3 → 2".
/// Graph attributes are left out: their bodies are diffed node by node.
std::vector<std::string> describeChanges(const GraphFacts& a, ir::NodeId na, const GraphFacts& b, ir::NodeId nb);

/// "max |Δ| 0.013" for two numeric tensors of the same shape; "" when they cannot be compared.
std::string maxAbsDifference(const ir::Tensor& x, const ir::Tensor& y);

}  // namespace passlens::diff
