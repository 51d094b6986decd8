#pragma once
// Which drawn edge a fusion refusal points at: explain names a blocking node and a blocking value;
// the graph view draws edges between operators. Plain function, tested without Qt.
#include <utility>
#include <vector>

#include "ir/Graph.h"

namespace passlens::analysis {

/// Operator-to-operator edges (producer, consumer) that carry `value` and matter for the refusal
/// of `node`: the edge into `blockingNode` when it reads the value (a second consumer), else the
/// edge into `node` when it reads it, else every edge of the value. Empty when the value has no
/// producing operator (graph input, initializer) or is kNone.
std::vector<std::pair<ir::NodeId, ir::NodeId>> blockingEdges(const ir::Graph& g, ir::ValueId value,
                                                             ir::NodeId blockingNode, ir::NodeId node);

}  // namespace passlens::analysis
