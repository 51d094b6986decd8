#pragma once
// A structural diff of two arbitrary models (two files, not two pass snapshots: those diff by
// stable id in passes/Diff.h). Nodes of A are matched to nodes of B in stages, each recorded on
// the match with a score in [0, 1]:
//   name       same node name, or same first output value name
//   weights    same initializer / Constant content (by hash) feeding the same op
//   structure  same op, attributes and matched inputs, bottom-up from the graph inputs (an exact
//              name-free subgraph fingerprint first, then propagation through matched producers)
//   neighbors  top-down from matched consumers (this also resolves interchangeable nodes: same op
//              and inputs, told apart only by who reads them)
//   similarity what is left, by op type, attributes, shapes, position and matched neighbours
// Subgraphs (If/Loop/Scan bodies) of matched nodes are diffed recursively.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/Model.h"

namespace passlens::diff {

enum class MatchHow : uint8_t { Name, Weights, Structure, Neighbors, Similarity };
enum class NodeStatus : uint8_t { Same, Changed, OnlyInA, OnlyInB };

std::string_view howName(MatchHow h);       ///< "name", "weights", ...
std::string_view statusName(NodeStatus s);  ///< "same", "changed", "only_in_a", "only_in_b"

/// One row of the diff: a matched pair, or a node found on one side only.
struct NodeDiff {
    ir::NodeId a = ir::kNone;  ///< kNone when only in B
    ir::NodeId b = ir::kNone;  ///< kNone when only in A
    NodeStatus status = NodeStatus::Same;
    MatchHow how = MatchHow::Name;  ///< meaningful for matched rows only
    double score = 0;               ///< 0 for unmatched rows
    std::vector<std::string> changes;  ///< in words: "attribute alpha 0.1 → 0.2"
    bool matched() const { return a != ir::kNone && b != ir::kNone; }
};

struct DiffSummary {
    size_t same = 0, changed = 0, onlyInA = 0, onlyInB = 0;
    size_t differing() const { return changed + onlyInA + onlyInB; }
};

/// The diff of one graph pair: the main graphs, or the bodies of a matched If/Loop/Scan.
struct GraphComparison {
    std::string path;  ///< "" = main graph; "If_3/then_branch" (A's node name) for a body
    const ir::Graph* a = nullptr;
    const ir::Graph* b = nullptr;
    /// Matched and A-only rows in A's topological order, then B-only rows in B's order.
    std::vector<NodeDiff> nodes;
    /// Row index by node id (kNoRow when the id is not a node of that side).
    std::vector<size_t> rowOfA, rowOfB;
    static constexpr size_t kNoRow = static_cast<size_t>(-1);

    const NodeDiff* rowForA(ir::NodeId n) const { return n < rowOfA.size() && rowOfA[n] != kNoRow ? &nodes[rowOfA[n]] : nullptr; }
    const NodeDiff* rowForB(ir::NodeId n) const { return n < rowOfB.size() && rowOfB[n] != kNoRow ? &nodes[rowOfB[n]] : nullptr; }
    DiffSummary summary() const;
};

struct DiffOptions {
    /// Match by names only (the `name` stage), as tools without a structural matcher do.
    bool namesOnly = false;
};

struct ModelComparison {
    std::vector<GraphComparison> graphs;  ///< main graph first, then matched bodies, depth first
    DiffSummary summary;                  ///< over every graph
    bool identical() const { return summary.differing() == 0; }
};

ModelComparison compareModels(const ir::Model& a, const ir::Model& b, const DiffOptions& options = {});

/// Loads a model to diff. Ops are not validated: the diff is structural, so ONNX Runtime's output
/// (com.microsoft fusions, the ai.onnx.ml opset 5 it imports) compares like any other model.
ir::Model importForDiff(const std::string& path, const std::vector<std::pair<std::string, int64_t>>& pinnedDims = {});

/// The name a row shows for a node: its name, or its id ("#12") when the name is empty.
std::string nodeLabel(const ir::Graph& g, ir::NodeId n);

}  // namespace passlens::diff
