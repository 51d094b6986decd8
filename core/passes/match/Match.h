#pragma once
// The matching toolbox the passes share: what is constant, what rank a value has, and who reads
// it. One definition each, so two passes never disagree on what a constant or a single reader is.
// (Shapes: ir::Value::staticDims() / rank(); op facts: analysis/OpRegistry.h; equality: Equality.h.)
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes::match {

/// The constant tensor behind `v`: an initializer that is not also a graph input (those can be
/// overridden at run time), or the `value` of a default-domain Constant node. nullptr otherwise.
ir::TensorPtr constantOf(const ir::Graph& g, ir::ValueId v);
/// The node is in the default ONNX domain ("" or "ai.onnx").
bool inDefaultDomain(const ir::Node& n);
/// Rank of `v` from its initializer, its type or its Constant producer; -1 when unknown.
int64_t rankOf(const ir::Graph& g, ir::ValueId v);

/// Nodes whose subgraphs read `v` by name (outer-scope captures are not consumers).
std::vector<ir::NodeId> subgraphReaders(const ir::Graph& g, ir::ValueId v);
/// Readers of `v`: consumer slots, one for a graph output, one per capturing node.
size_t readerCount(const ir::Graph& g, ir::ValueId v);
/// True when exactly one node slot reads `v` (not a graph output, not captured by a subgraph).
bool hasSingleReader(const ir::Graph& g, ir::ValueId v);
/// True when `v` is read by anything outside `inside` (another node, a subgraph, the graph output).
bool readOutside(const ir::Graph& g, ir::ValueId v, const std::vector<ir::NodeId>& inside);
/// "Add_3, Mul_4, the graph output": who reads `v`, for remarks.
std::string readersOf(const ir::Graph& g, ir::ValueId v);

}  // namespace passlens::passes::match
