#include "graph/FirstView.h"

#include <algorithm>
#include <vector>

namespace passlens::ui {

using layout::DisplayNode;

namespace {

QRectF toQt(const layout::Rect& r) { return QRectF(r.x, r.y, r.width, r.height); }

/// Top to bottom, then left to right.
bool readsBefore(const QRectF& a, const QRectF& b) { return a.top() != b.top() ? a.top() < b.top() : a.left() < b.left(); }

}  // namespace

QRectF inputAnchor(const layout::DisplayGraph& display, const layout::LayoutResult& layout, QSizeF visible) {
    std::vector<QRectF> inputs, others;
    for (size_t i = 0; i < display.nodes.size() && i < layout.boxes.size(); ++i)
        (display.nodes[i].kind == DisplayNode::Kind::Input ? inputs : others).push_back(toQt(layout.boxes[i].rect));
    std::vector<QRectF>& pool = inputs.empty() ? others : inputs;
    if (pool.empty()) return toQt(layout.bounds);
    std::sort(pool.begin(), pool.end(), readsBefore);
    // Inputs side by side (a model's several inputs) are shown together while they fit.
    QRectF anchor = pool.front();
    for (size_t i = 1; i < pool.size(); ++i) {
        const QRectF wider = anchor.united(pool[i]);
        if (wider.width() <= 0.9 * visible.width() && wider.height() <= 0.5 * visible.height()) anchor = wider;
    }
    return anchor;
}

FirstView chooseFirstView(const layout::DisplayGraph& display, const layout::LayoutResult& layout, QSizeF viewport,
                          double topRoom) {
    FirstView view;
    const QRectF r = toQt(layout.bounds).adjusted(-20, -20 - topRoom, 20, 20);
    if (r.isEmpty() || viewport.isEmpty()) return view.fitWhole = true, view;
    const double fitScale = std::min(viewport.width() / r.width(), viewport.height() / r.height());
    if (fitScale >= kReadableScale) return view.fitWhole = true, view;
    // Too big to read fitted: as wide as fits (readable, capped), the inputs at the top.
    view.scale = std::clamp(viewport.width() / r.width(), kReadableScale, 0.9);
    const QSizeF visible = viewport / view.scale;
    const QRectF anchor = inputAnchor(display, layout, visible);
    const double top = anchor.top() - 30 - topRoom;
    view.center = QPointF(anchor.center().x(), top + visible.height() / 2);
    // A drawing narrower than the view stays centered across; the inputs still set the height.
    if (r.width() <= visible.width()) view.center.setX(r.center().x());
    return view;
}

}  // namespace passlens::ui
