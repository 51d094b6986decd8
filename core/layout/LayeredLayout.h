#pragma once
// The layout that cannot fall over: longest-path layering and barycentric ordering (the first two
// phases of Sugiyama's method, without dummy nodes), straight edges. Linear in boxes and edges
// per sweep, no recursion. The view uses it when Graphviz fails or is handed too much.
#include <cstddef>
#include <utility>
#include <vector>

#include "layout/Layout.h"

namespace passlens::layout {

/// Layer of every box: 0 for boxes without predecessors, else 1 + the deepest predecessor.
/// Edges that close a cycle (back edges in input order) are ignored, so any input is layered.
std::vector<int> longestPathLayers(size_t boxes, const std::vector<std::pair<size_t, size_t>>& edges);

/// Boxes of each layer, ordered by alternating down/up barycenter sweeps that start from the
/// input order (stable: boxes with no neighbours keep their place).
std::vector<std::vector<size_t>> orderLayers(const std::vector<int>& layers,
                                             const std::vector<std::pair<size_t, size_t>>& edges, int sweeps = 4);

/// Places the request's boxes layer by layer (top to bottom, each layer centered) and draws each
/// edge as a straight cubic from the tail's bottom to the head's top. Same result shape as
/// layoutGraph: boxes and edges in request order.
LayoutResult layeredLayout(const LayoutRequest& request);

}  // namespace passlens::layout
