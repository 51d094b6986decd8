#include "stepper/GhostPlacement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace passlens::ui {

namespace {
bool overlaps(const layout::Rect& a, const layout::Rect& b, double gap) {
    return a.x < b.right() + gap && b.x < a.right() + gap && a.y < b.bottom() + gap && b.y < a.bottom() + gap;
}
}  // namespace

std::vector<GhostPlacement> placeGhosts(const layout::DisplayGraph& beforeGraph, const layout::LayoutResult& before,
                                        const layout::DisplayGraph& afterGraph, const layout::LayoutResult& after,
                                        const std::vector<ir::NodeId>& removed) {
    std::unordered_map<uint32_t, size_t> afterIndex;
    for (size_t i = 0; i < afterGraph.nodes.size() && i < after.boxes.size(); ++i) afterIndex[afterGraph.nodes[i].key] = i;
    std::unordered_map<uint32_t, size_t> beforeIndex;
    for (size_t i = 0; i < beforeGraph.nodes.size() && i < before.boxes.size(); ++i) beforeIndex[beforeGraph.nodes[i].key] = i;

    std::vector<GhostPlacement> out;
    std::vector<layout::Rect> taken;  // real boxes and ghosts placed so far
    for (const auto& b : after.boxes) taken.push_back(b.rect);
    for (ir::NodeId r : removed) {
        auto it = beforeIndex.find(r);
        if (it == beforeIndex.end()) continue;
        const layout::Rect& from = before.boxes[it->second].rect;
        const auto fromCenter = before.boxes[it->second].center();
        // Anchor: the nearest box of the before drawing that is still drawn after the pass.
        double best = std::numeric_limits<double>::max();
        size_t anchorBefore = 0, anchorAfter = 0;
        bool found = false;
        for (size_t i = 0; i < before.boxes.size() && i < beforeGraph.nodes.size(); ++i) {
            auto a = afterIndex.find(beforeGraph.nodes[i].key);
            if (a == afterIndex.end()) continue;
            const auto c = before.boxes[i].center();
            const double d = std::hypot(c.x - fromCenter.x, c.y - fromCenter.y);
            if (d < best) { best = d; anchorBefore = i; anchorAfter = a->second; found = true; }
        }
        if (!found) continue;
        const auto b0 = before.boxes[anchorBefore].center(), a0 = after.boxes[anchorAfter].center();
        layout::Rect rect{from.x + (a0.x - b0.x), from.y + (a0.y - b0.y), from.width, from.height};
        // Step right past whatever stands there now (a closed-up neighbour or another ghost).
        for (int tries = 0; tries < 24; ++tries) {
            auto hit = std::find_if(taken.begin(), taken.end(), [&](const layout::Rect& t) { return overlaps(rect, t, 8); });
            if (hit == taken.end()) break;
            rect.x = hit->right() + 12;
        }
        taken.push_back(rect);
        const auto& dn = beforeGraph.nodes[it->second];
        out.push_back({r, rect, dn.title, dn.subtitle});
    }
    return out;
}

}  // namespace passlens::ui
