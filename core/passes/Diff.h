#pragma once
// The difference between two snapshots of one graph, by stable id: nodes only in `before`
// (removed), only in `after` (added), in both but different (changed); and which removed nodes
// each added node came from (provenance).
#include <map>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes {

struct GraphDiff {
    std::vector<ir::NodeId> added, removed, changed;
    std::vector<ir::ValueId> addedValues, removedValues;
    std::map<ir::NodeId, std::vector<ir::NodeId>> origins;  ///< added node → original ids it replaced
    bool empty() const { return added.empty() && removed.empty() && changed.empty(); }
};

GraphDiff diffGraphs(const ir::Graph& before, const ir::Graph& after);

}  // namespace passlens::passes
