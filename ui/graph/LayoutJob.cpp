#include "graph/LayoutJob.h"

#include <QFontMetricsF>
#include <QtConcurrent>

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

SnapshotPtr layoutNow(std::shared_ptr<const ir::Model> model, const ir::Graph* graph, layout::DisplayOptions options) {
    auto snap = std::make_shared<GraphSnapshot>();
    snap->model = std::move(model);
    snap->graph = graph;
    snap->display = layout::buildDisplayGraph(*graph, options);
    snap->layout = layout::layoutGraph(layout::toLayoutRequest(snap->display, makeSizer()));
    return snap;
}

QFuture<SnapshotPtr> startLayout(std::shared_ptr<const ir::Model> model, const ir::Graph* graph,
                                 layout::DisplayOptions options) {
    return QtConcurrent::run([model = std::move(model), graph, options]() { return layoutNow(model, graph, options); });
}

}  // namespace passlens::ui
