#pragma once
// Shape chains as PyTorch's exporter writes them: Shape(x) → Gather/Slice → Unsqueeze → Concat
// (with Casts and constant pieces) computing an int64 shape vector at run time. traceShapeVector
// reads such a chain back as a list of entries, each a literal or "dim k of value x", so passes can
// replace it by a constant (fuse-reshape) or fold the entries whose dims are static
// (shape-chain-folding).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes {

struct ShapeEntry {
    std::optional<int64_t> literal;  ///< a constant entry
    ir::ValueId source = ir::kNone;  ///< otherwise: dim `dim` of `source`
    size_t dim = 0;
};

struct ShapeTrace {
    std::vector<ShapeEntry> entries;
    bool scalar = false;             ///< the value is a 0-d tensor (one entry)
    /// Set instead of `entries` for Shape(x) of an x whose rank is unknown: a Gather with a
    /// non-negative index still names dim k of x, which is all fuse-reshape needs for "copy".
    ir::ValueId wholeShapeOf = ir::kNone;
    std::vector<ir::NodeId> nodes;   ///< the chain's nodes (Shape, Gather, Unsqueeze, Concat, ...)
    /// When the trace fails: the node (or kNone for a graph input) that is not part of a shape
    /// chain, and a sentence saying why.
    ir::NodeId blocker = ir::kNone;
    std::string why;
    bool ok() const { return why.empty(); }
};

/// Reads `v` (an int64 scalar or 1-D tensor) back through Shape, Gather, Slice, Unsqueeze, Squeeze,
/// Concat, Cast-to-int64 and constants. On failure `why` names the first node that is none of them.
ShapeTrace traceShapeVector(const ir::Graph& g, ir::ValueId v);

/// The dim `k` of `v`'s type, if its rank is known.
std::optional<ir::Dim> dimOf(const ir::Graph& g, ir::ValueId v, size_t k);
/// True when dim `a` of value `va` and dim `b` of value `vb` are equal for every run: the same dim
/// of the same value, equal static sizes, or the same dim_param name (one name is one value).
bool provablyEqualDims(const ir::Graph& g, ir::ValueId va, size_t a, ir::ValueId vb, size_t b);
/// The entry's static size: its literal, or a static dim of its source.
std::optional<int64_t> staticValueOf(const ir::Graph& g, const ShapeEntry& e);
/// True when some node of `g` has a subgraph: only then can a value be read by an outer-scope
/// capture. Rewriter::isCapturedBySubgraph scans every node, so passes ask this once per graph.
bool hasSubgraphNodes(const ir::Graph& g);
/// "dim 1 (seq) of 'x'" or "8".
std::string describeEntry(const ir::Graph& g, const ShapeEntry& e);

}  // namespace passlens::passes
