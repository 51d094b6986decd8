#pragma once
// Where to draw the nodes a pass removed, inside the drawing of the snapshot after the pass.
// Each removed box keeps its offset from the nearest box that survived the pass (an anchor), and
// is moved right until it overlaps no real box. Plain geometry on laid-out snapshots, no Qt items.
#include <string>
#include <vector>

#include "ir/Graph.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"

namespace passlens::ui {

struct GhostPlacement {
    ir::NodeId node = ir::kNone;
    layout::Rect rect;       ///< in the after drawing's coordinates
    std::string title, subtitle;
};

/// Ghost boxes for `removed` nodes that had a box in the before drawing (constants folded into
/// their readers have none). Empty when no box survived (nothing to anchor to).
std::vector<GhostPlacement> placeGhosts(const layout::DisplayGraph& beforeGraph, const layout::LayoutResult& before,
                                        const layout::DisplayGraph& afterGraph, const layout::LayoutResult& after,
                                        const std::vector<ir::NodeId>& removed);

}  // namespace passlens::ui
