#pragma once
// Geometry of a cluster frame drawn around a group of boxes (fusion groups in the graph view).
// Plain data, tested without a GUI.
#include <optional>
#include <vector>

#include "layout/Layout.h"

namespace passlens::layout {

struct ClusterFrame {
    Rect frame;          ///< around every member, `padding` on each side, a label band on top
    Point labelAnchor;   ///< top-left of the label text, inside the label band
};

/// Frame around member boxes. nullopt without members.
std::optional<ClusterFrame> clusterFrame(const std::vector<Rect>& members, double padding, double labelHeight);

}  // namespace passlens::layout
