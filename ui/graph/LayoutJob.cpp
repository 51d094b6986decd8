#include "graph/LayoutJob.h"

#include <QFontMetricsF>
#include <chrono>

namespace passlens::ui {

QFont nodeTitleFont() {
    QFont f("DejaVu Sans");
    f.setPixelSize(12);
    f.setBold(true);
    return f;
}

QFont nodeTextFont() {
    QFont f("DejaVu Sans");
    f.setPixelSize(10);
    return f;
}

namespace {

layout::BoxSizer makeSizer() {
    // QFontMetricsF is reentrant: each call builds its own metrics object.
    return [title = nodeTitleFont(), text = nodeTextFont()](const layout::DisplayNode& n) {
        QFontMetricsF tm(title), fm(text);
        double w = tm.horizontalAdvance(QString::fromStdString(n.title));
        w = std::max(w, fm.horizontalAdvance(QString::fromStdString(n.subtitle)));
        for (const auto& l : n.foldedLines) w = std::max(w, fm.horizontalAdvance(QString::fromStdString(l)));
        w = std::clamp(w + 22.0, 64.0, 360.0);
        size_t lines = (n.subtitle.empty() ? 0 : 1) + n.foldedLines.size();
        double h = 12.0 + tm.height() + lines * fm.height();
        return std::pair<double, double>{w, std::max(h, 30.0)};
    };
}

}  // namespace

layout::BoxSizer nodeBoxSizer() { return makeSizer(); }

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void takeDrawing(GraphSnapshot& snap, layout::HierarchicalDrawing&& d) {
    snap.display = std::move(d.display);
    snap.layout = std::move(d.layout);
    snap.frames = std::move(d.frames);
    snap.expanded = std::move(d.expanded);
    snap.groupsPlaced = d.placements;
}

}  // namespace

std::vector<std::string> openGroupPaths(const SnapshotPtr& snap) {
    std::vector<std::string> out;
    if (!snap || !snap->hierarchy()) return out;
    for (hierarchy::GroupId g : snap->expanded)
        if (g != hierarchy::kRootGroup) out.push_back(snap->hierarchy()->group(g).path);
    return out;
}

std::optional<layout::Expansion> expansionOfPaths(const hierarchy::Hierarchy& h, const std::vector<std::string>& paths) {
    layout::Expansion e{hierarchy::kRootGroup};
    bool found = false;
    for (const auto& p : paths)
        if (auto g = h.findPath(p)) {
            e = layout::withPathTo(h, std::move(e), *g);
            found = true;
        }
    if (!found) return std::nullopt;
    return e;
}

SnapshotPtr layoutNow(std::shared_ptr<const ir::Model> model, const ir::Graph* graph, layout::DisplayOptions options,
                      const std::vector<std::string>& keepOpen) {
    auto t0 = std::chrono::steady_clock::now();
    auto snap = std::make_shared<GraphSnapshot>();
    snap->model = std::move(model);
    snap->graph = graph;
    layout::DisplayGraph dg = layout::buildDisplayGraph(*graph, options);
    std::shared_ptr<hierarchy::Hierarchy> h;
    if (dg.nodes.size() > layout::kWholeGraphBoxes) h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(*graph));
    if (!h || !layout::drawThroughHierarchy(dg.nodes.size(), *h)) {
        snap->display = std::move(dg);
        snap->groupingSeconds = secondsSince(t0);
        t0 = std::chrono::steady_clock::now();
        snap->layout = layout::layoutOrFallBack(layout::toLayoutRequest(snap->display, makeSizer()));
        snap->layoutSeconds = secondsSince(t0);
        return snap;
    }
    auto kept = keepOpen.empty() ? std::nullopt : expansionOfPaths(*h, keepOpen);
    layout::Expansion opening = kept ? *kept : layout::expansionWithinBudget(*h, dg, kOpeningBoxBudget);
    snap->layouter = std::make_shared<layout::HierarchicalLayouter>(h, std::move(dg), makeSizer());
    snap->groupingSeconds = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    takeDrawing(*snap, snap->layouter->draw(opening));
    snap->layoutSeconds = secondsSince(t0);
    return snap;
}

SnapshotPtr redrawWith(const SnapshotPtr& base, layout::Expansion expanded, const std::atomic<bool>* cancel) {
    auto t0 = std::chrono::steady_clock::now();
    auto snap = std::make_shared<GraphSnapshot>();
    snap->model = base->model;
    snap->graph = base->graph;
    snap->layouter = base->layouter;
    takeDrawing(*snap, snap->layouter->draw(expanded, cancel));
    snap->layoutSeconds = secondsSince(t0);
    return snap;
}

}  // namespace passlens::ui
