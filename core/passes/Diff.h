#pragma once
// Differences between two snapshots of a model, matched by stable node/value id (ids are per
// graph: the main graph and each subgraph, named by path, are diffed separately).
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::passes {

struct GraphDiff {
    std::string graphPath;                  ///< "" = main graph
    std::vector<ir::NodeId> addedNodes;     ///< in b only (with b's provenance for "came from")
    std::vector<ir::NodeId> removedNodes;   ///< in a only
    std::vector<ir::NodeId> changedNodes;   ///< in both, with different op, inputs, outputs or attributes
    std::vector<ir::ValueId> addedValues, removedValues;
    /// In both, with a different type/shape, producer or constant payload.
    std::vector<ir::ValueId> changedValues;
    /// One sentence per added node, same order as addedNodes ("Gemm_5 came from MatMul_12 + Add_13").
    std::vector<std::string> cameFrom;
};

/// One entry per graph path present in either model (empty diffs included for the main graph).
std::vector<GraphDiff> diffModels(const ir::Model& a, const ir::Model& b);
GraphDiff diffGraphs(const ir::Graph& a, const ir::Graph& b, const std::string& path = {});

/// What the graph diffs cannot show: model-local functions (named "domain::name"; "changed" when
/// the body, formal inputs/outputs, attributes or opset imports differ), opset imports and the
/// IR version.
struct ModelLevelDiff {
    struct OpsetChange {
        std::string domain;        ///< "" = ai.onnx
        int64_t before = 0;        ///< 0 = not imported
        int64_t after = 0;
    };
    std::vector<std::string> addedFunctions, removedFunctions, changedFunctions;
    std::vector<OpsetChange> opsetChanges;
    int64_t irVersionBefore = 0, irVersionAfter = 0;
    bool empty() const;
    /// One line per difference ("+ function passlens.fused::fused_0_Conv", "opset passlens.fused: - -> 1").
    std::vector<std::string> lines() const;
    /// One short line for a caption: opset changes in full, functions counted
    /// ("ai.onnx opset 11 → 17 · +12 functions · IR 7 → 8"); empty when nothing differs.
    std::string summary() const;
};
ModelLevelDiff diffModelLevel(const ir::Model& a, const ir::Model& b);


/// Where node `n` of `after` came from, from its provenance, naming the origins as `before` (or,
/// failing that, `after`) knows them: "Gemm_5 came from MatMul_12 + Add_13"; "Relu_3 is new" when
/// it has no provenance and did not exist in `before`; "Relu_3 is unchanged in origin" otherwise.
std::string cameFromSentence(const ir::Graph& before, const ir::Graph& after, ir::NodeId n);
/// The same for the main graphs of two models.
std::string cameFromSentence(const ir::Model& before, const ir::Model& after, ir::NodeId n);

/// Sorted node ids of a graph.
std::vector<ir::NodeId> nodeIdSet(const ir::Graph& g);
/// Applies a diff to a's node-id set: (ids − removed) ∪ added, sorted.
std::vector<ir::NodeId> applyNodeDiff(const std::vector<ir::NodeId>& ids, const GraphDiff& d);

}  // namespace passlens::passes
