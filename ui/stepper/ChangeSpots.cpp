#include "stepper/ChangeSpots.h"

#include <algorithm>
#include <unordered_map>

namespace passlens::ui {

std::vector<ChangeSpot> changeSpots(const GraphSnapshot& snap, const StepDiff& diff,
                                    const std::vector<std::pair<ir::NodeId, QRectF>>& ghosts) {
    // Where each key is drawn.
    std::unordered_map<uint32_t, QRectF> boxOf;
    for (size_t i = 0; i < snap.display.nodes.size() && i < snap.layout.boxes.size(); ++i) {
        const auto& r = snap.layout.boxes[i].rect;
        boxOf[snap.display.nodes[i].key] = QRectF(r.x, r.y, r.width, r.height);
    }
    const hierarchy::Hierarchy* h = snap.hierarchy();
    std::vector<ChangeSpot> out;
    auto place = [&](ir::NodeId id, DiffState state) {
        if (auto it = boxOf.find(id); it != boxOf.end() && layout::isOpKey(id)) return out.push_back({id, state, it->second, true});
        if (!h || !snap.graph->hasNode(id)) return;
        // Hidden in a collapsed group: the outermost closed group on its path is the box drawn.
        for (hierarchy::GroupId g : h->pathTo(id))
            if (!snap.expanded.count(g)) {
                if (auto it = boxOf.find(layout::groupKey(g)); it != boxOf.end()) out.push_back({id, state, it->second, false});
                return;
            }
    };
    for (ir::NodeId id : diff.added) place(id, DiffState::Added);
    for (ir::NodeId id : diff.changed) place(id, DiffState::Changed);
    // Ghosts of removed nodes keep the previous drawing's positions, which can lie outside this
    // (smaller) drawing: only those inside it are places to go, and after the boxes that exist.
    const auto& b = snap.layout.bounds;
    const QRectF drawing(b.x, b.y, b.width, b.height);
    const size_t boxes = out.size();
    for (const auto& [id, rect] : ghosts)
        if (drawing.isEmpty() || drawing.intersects(rect)) out.push_back({id, DiffState::Removed, rect, true});
    auto readingOrder = [](const ChangeSpot& x, const ChangeSpot& y) {
        return x.rect.top() != y.rect.top() ? x.rect.top() < y.rect.top() : x.rect.left() < y.rect.left();
    };
    std::stable_sort(out.begin(), out.begin() + static_cast<ptrdiff_t>(boxes), readingOrder);
    std::stable_sort(out.begin() + static_cast<ptrdiff_t>(boxes), out.end(), readingOrder);
    return out;
}

const ChangeSpot* nextChangeSpot(const std::vector<ChangeSpot>& spots, ir::NodeId current, int step) {
    if (spots.empty()) return nullptr;
    const auto at = std::find_if(spots.begin(), spots.end(), [&](const ChangeSpot& s) { return s.node == current; });
    if (at == spots.end()) return step >= 0 ? &spots.front() : &spots.back();
    const auto n = static_cast<ptrdiff_t>(spots.size());
    const ptrdiff_t i = ((at - spots.begin()) + (step >= 0 ? 1 : -1) + n) % n;
    return &spots[size_t(i)];
}

}  // namespace passlens::ui
