#include "layout/Clusters.h"

#include <algorithm>

namespace passlens::layout {

std::optional<ClusterFrame> clusterFrame(const std::vector<Rect>& members, double padding, double labelHeight) {
    if (members.empty()) return std::nullopt;
    double left = members[0].x, top = members[0].y, right = members[0].right(), bottom = members[0].bottom();
    for (const Rect& r : members) {
        left = std::min(left, r.x);
        top = std::min(top, r.y);
        right = std::max(right, r.right());
        bottom = std::max(bottom, r.bottom());
    }
    ClusterFrame f;
    f.frame = {left - padding, top - padding - labelHeight, right - left + 2 * padding,
               bottom - top + 2 * padding + labelHeight};
    f.labelAnchor = {f.frame.x + padding, f.frame.y + padding / 2};
    return f;
}

}  // namespace passlens::layout
