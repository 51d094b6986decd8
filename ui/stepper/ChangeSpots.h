#pragma once
// Where a shown step's changes are in its drawing, in reading order (top to bottom, then left to
// right): the "first change" a step brings into view and what Passes ▸ Next Change walks through.
// Plain geometry over the snapshot, keyed by NodeId; no scene items involved.
#include <QRectF>
#include <vector>

#include "graph/GraphSnapshot.h"
#include "stepper/DiffStyle.h"

namespace passlens::ui {

struct ChangeSpot {
    ir::NodeId node = ir::kNone;
    DiffState state = DiffState::Changed;
    QRectF rect;          ///< scene rect: the node's box, its collapsed group's box, or its ghost
    bool drawn = true;    ///< false: inside a collapsed group (rect is the group's box)
};

/// Added and changed nodes of `diff` found in `snap`'s drawing (their own box, or the box of the
/// collapsed group holding them), plus `ghosts` (removed nodes where they are drawn), sorted in
/// reading order. Nodes with no place in the drawing (folded constants) are left out.
std::vector<ChangeSpot> changeSpots(const GraphSnapshot& snap, const StepDiff& diff,
                                    const std::vector<std::pair<ir::NodeId, QRectF>>& ghosts = {});

/// The spot after `current` (by node) in `spots`, wrapping around; the first when `current` is
/// not among them. `step` -1 walks backwards. Null when there are no spots.
const ChangeSpot* nextChangeSpot(const std::vector<ChangeSpot>& spots, ir::NodeId current, int step = 1);

}  // namespace passlens::ui
