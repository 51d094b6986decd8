#pragma once
// Where edge labels go so that they can be read: no label on top of another label or of a box.
// The layout gives every edge one anchor (the middle of its path); where edges converge on one
// box those anchors crowd together and the labels print over each other. Each label here tries
// places along its own edge, middle first and then out toward both ends, beside the line on the
// right and then on the left, and takes the first free one. A label with no free place gets none:
// the caller shows it on demand (hover, selection) instead of over something else.
#include <optional>
#include <vector>

#include "layout/Layout.h"

namespace passlens::layout {

struct LabelSize {
    double width = 0, height = 0;  ///< 0 × 0: the edge has no label
};

/// One rectangle (y down, top-left) per edge, or nullopt when the edge has no label or no free
/// place. `sizes` has one entry per edge; `obstacles` are the boxes labels must not cover.
/// Deterministic: edges are served in order. Near-linear: a grid index holds what is placed.
std::vector<std::optional<Rect>> placeEdgeLabels(const std::vector<EdgePath>& edges, const std::vector<LabelSize>& sizes,
                                                 const std::vector<Rect>& obstacles);

/// The point `fraction` (0..1) of the way along the path: along the drawn curve for a cubic
/// Bézier path (1 + 3k points), along the polyline for anything else.
Point pointAlongPath(const std::vector<Point>& points, double fraction);

/// Where a label of `size` sits beside `anchor`: right of it (or left), vertically centred.
Rect labelRectAt(Point anchor, LabelSize size, bool leftSide);

/// Whether two rectangles share interior area (touching edges do not count).
bool rectsOverlap(const Rect& a, const Rect& b);

}  // namespace passlens::layout
