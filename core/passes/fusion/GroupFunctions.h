#pragma once
// `optimize --group-functions`: each fusion group with two or more members becomes one call of an
// ONNX model-local function (FunctionProto), as TVM turns each group into a primitive function.
// The model still runs anywhere, and the top-level node count is the kernel count.
#include <optional>
#include <string>

#include "analysis/FusionGroups.h"
#include "ir/Model.h"
#include "passes/Pass.h"
#include "passes/PassManager.h"
#include "passes/PassRegistry.h"
#include "passes/Rewriter.h"

namespace passlens::passes {

inline constexpr const char* kFusedFunctionDomain = "passlens.fused";

struct GroupFunctionsResult {
    size_t nodesBefore = 0;     ///< top-level nodes before
    size_t nodesAfter = 0;      ///< top-level nodes after (calls + nodes left alone)
    size_t functions = 0;       ///< functions created (= groups with 2+ members)
    size_t subgraphFunctions = 0; ///< of those, made inside If/Loop bodies
    size_t deepNodesBefore = 0; ///< nodes of all graphs (subgraphs included) before
    size_t deepNodesAfter = 0;  ///< ... and after: the kernel count with subgraph bodies counted
    size_t fusedNodes = 0;      ///< nodes moved into function bodies
    size_t constantNodes = 0;   ///< Constant nodes left at top level (data, not kernels)
    size_t kernels() const { return nodesAfter - constantNodes; }
};

/// Rewrites the main graph in place. Function inputs are the values the group reads from outside
/// (initializers included); outputs are the values read outside the group or that are graph
/// outputs. Adds the opset import of kFusedFunctionDomain and raises ir_version to 8 if lower
/// (model-local functions need it). Idempotent: calls made by an earlier run are Opaque and stay.
/// With `subgraphs`, If/Loop bodies are grouped too (their captures become call arguments).
/// Runs the `group-functions` pass (below) on `model` outside a pipeline, for callers that want
/// the figures rather than the change log.
GroupFunctionsResult groupIntoFunctions(ir::Model& model, const analysis::FusionOptions& options = {}, bool subgraphs = true);

/// `group-functions`: the registered pass behind `optimize --group-functions`. Every edit (calls,
/// functions, the opset import, the IR version) goes through the Rewriter, so the step has a
/// change log, is verified and diffs like any other pass. Its PassResult::counters hold the
/// GroupFunctionsResult figures (functions, functions_in_subgraphs, fused_nodes, nodes_before,
/// nodes_after, kernels, deep_nodes_before, deep_nodes_after).
std::unique_ptr<Pass> makeGroupFunctionsPass();
/// GroupFunctionsResult from a group-functions PassResult's counters.
GroupFunctionsResult groupFunctionsResultOf(const PassResult& r);
/// The figures of a pipeline's group-functions step (the last one that changed, else the first),
/// nullopt when it did not run.
std::optional<GroupFunctionsResult> groupFunctionsResultOf(const PipelineResult& r);

/// A function body holding copies of `nodes` (in the given, topological, order) of `g`: formal
/// inputs `ins`, formal outputs `outs`. Any other value the nodes read must be a constant
/// initializer; it becomes a Constant node inside the body (functions have no initializers).
std::shared_ptr<ir::Graph> functionBodyOf(const ir::Graph& g, const std::vector<ir::NodeId>& nodes,
                                          const std::vector<ir::ValueId>& ins, const std::vector<ir::ValueId>& outs,
                                          const std::string& name);

/// Makes `body` a model-local function of kFusedFunctionDomain named `baseName` ("Gelu"), or
/// reuses an existing one whose body computes the same thing (same ops, wiring, attributes and
/// constants; names ignored). A different body under a taken name gets "_2", "_3", ...
/// Adds the domain's opset import and raises ir_version to 8 if lower. Returns the name.
/// Edits go through `rw` (change-log entries for the function, the opset import, the IR version).
std::string addOrReuseFunction(Rewriter& rw, std::shared_ptr<ir::Graph> body, const std::string& baseName,
                               const std::string& docString);

}  // namespace passlens::passes
