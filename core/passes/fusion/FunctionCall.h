#pragma once
// One matched pattern (GELU, SiLU, attention) → one call of a model-local function in
// passlens.fused, shared by group-gelu, group-silu and group-attention.
#include <map>
#include <string>
#include <vector>

#include "passes/Rewriter.h"

namespace passlens::passes {

/// Replaces `nodes` of the rewriter's graph by one call reading `ins` and producing `out`. The
/// nodes are put in `position` order (a topological index); constants they read move into the body
/// and are removed from the graph when nothing else reads them. The body keeps no shapes, so one
/// function serves calls of every shape; an existing function with the same body is reused, else
/// one named `baseName` ("_2", ... when taken) is added. `at` names the pattern in the change log
/// and the applied remark ("GELU (erf form) at Erf_3"); `suffix` ends the remark.
ir::NodeId replaceByFunctionCall(Rewriter& rw, std::vector<ir::NodeId> nodes, const std::vector<ir::ValueId>& ins, ir::ValueId out,
                                 const std::map<ir::NodeId, size_t>& position, const std::string& baseName,
                                 const std::string& docString, const std::string& at, ir::NodeId anchor,
                                 const std::string& suffix = {});

/// Topological index of every node of `g` (for replaceByFunctionCall).
std::map<ir::NodeId, size_t> topologicalPositions(const ir::Graph& g);

}  // namespace passlens::passes
