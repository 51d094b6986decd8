#pragma once
// Name-free hashes for the model diff: tensor contents, attributes, types, and a Merkle-style
// structural fingerprint per node (op, attributes, and the fingerprints of its inputs, with graph
// inputs keyed by position and constants by content). Two nodes with equal fingerprints compute
// the same thing from the same graph inputs and constants, whatever they are called.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ir/Graph.h"

namespace passlens::diff {

/// 64-bit hash mixing (splitmix64 finalizer over a running combination).
uint64_t mixHash(uint64_t seed, uint64_t v);
uint64_t hashBytes(const void* data, size_t size, uint64_t seed = 0);
uint64_t hashString(std::string_view s, uint64_t seed = 0);
/// Element type, dims and payload (strings included); never the tensor's name.
uint64_t hashTensor(const ir::Tensor& t);
uint64_t hashType(const ir::TypeInfo& t);
/// Attributes in name order, values by content; a graph attribute by its body's fingerprint.
uint64_t hashAttributes(const std::vector<ir::Attribute>& attrs);

/// Per-graph facts the matcher asks for again and again, computed once.
struct GraphFacts {
    /// `enclosing`: the facts of the graph a body lives in, so that captures of the enclosing
    /// graph's constants (weights of If/Loop bodies) count as constants of that content here.
    explicit GraphFacts(const ir::Graph& g, const GraphFacts* enclosing = nullptr);

    const ir::Graph& graph;
    const GraphFacts* enclosing = nullptr;
    std::vector<ir::NodeId> topo;          ///< topological order (list order on a cycle)
    std::vector<double> position;          ///< by node id: index in topo / count, in [0, 1]
    std::vector<uint64_t> opKey;           ///< by node id: domain + op type
    std::vector<uint64_t> attrHash;        ///< by node id
    std::vector<uint64_t> inputTypesHash;  ///< by node id: element types and shapes of the inputs
    std::vector<uint64_t> nodePrint;       ///< by node id: structural fingerprint
    std::vector<uint64_t> valuePrint;      ///< by value id
    /// By value id: content hash when the value is an initializer or a Constant node's output (or a
    /// capture of one of the enclosing graph's).
    std::vector<std::optional<uint64_t>> constHash;
    std::vector<int> inputPosition;        ///< by value id: index among graph inputs, -1 otherwise

    /// The tensor behind a constant value (initializer or Constant's `value`), or null.
    const ir::Tensor* constTensor(ir::ValueId v) const;
    /// Output slot of `v` in its producer (-1 without producer).
    int outputSlot(ir::ValueId v) const;
};

/// Fingerprint of a whole graph (its outputs' fingerprints), used for graph attributes.
uint64_t graphFingerprint(const ir::Graph& g);

}  // namespace passlens::diff
