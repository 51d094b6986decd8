#pragma once
// A compact textual form of a graph, one node per line, for golden tests (CHECK / CHECK-NOT
// lines as in MLIR's FileCheck), the CLI and the app's text view:
//   %conv_out: float32[1x8x16x16] = Conv(%image, @conv.weight, @conv.bias) {pads=[1, 1, 1, 1]}  # conv
// Values are %name, initializers @name; subgraphs are printed indented under their node.
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::ir {

std::string printGraph(const Graph& g, int indent = 0);
std::string printModel(const Model& m);

/// Minimal FileCheck: each CHECK line must match (substring) a later line than the previous
/// match; CHECK-NOT lines must not appear between the surrounding matches. Returns an empty
/// string on success, else what failed.
std::string fileCheck(const std::string& text, const std::vector<std::string>& checks);

}  // namespace passlens::ir
