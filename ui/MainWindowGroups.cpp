// MainWindow: large graphs drawn through their hierarchy. Groups open and close in place
// (double-click, the View ▸ Groups menu, find), a breadcrumb names where the selection sits.
#include <QFontMetrics>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>

#include "LatestJob.h"
#include "MainWindow.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "stepper/DiffStyle.h"

#include <map>

namespace passlens::ui {

void MainWindow::buildGroupMenu(QMenu* view) {
    QMenu* groups = view->addMenu(tr("&Groups"));
    groups->setObjectName("groupsMenu");
    groups->addAction(tr("&Expand All"), this, &MainWindow::expandAllGroups);
    groups->addAction(tr("Expand &Selection"), this, [this] {
        if (ir::NodeId id = mainView_->selectedNode(); id != ir::kNone) revealNode(id);
    });
    groups->addSeparator();
    groups->addAction(tr("Collapse to &Top Level"), this, [this] { collapseToLevel(0); });
    for (int level = 1; level <= 3; ++level)
        groups->addAction(tr("Collapse to Level &%1").arg(level), this, [this, level] { collapseToLevel(level); });
    breadcrumb_ = new QLabel(this);
    breadcrumb_->setObjectName("breadcrumb");
    breadcrumb_->setStyleSheet("QLabel { color: #374151; padding: 0 6px; }");
    statusBar()->addPermanentWidget(breadcrumb_);
    connect(mainView_, &GraphView::nodeSelected, this, [this](ir::NodeId) { updateBreadcrumb(); });
}

void MainWindow::setGroupExpanded(uint32_t group, bool expand) {
    SnapshotPtr snap = mainView_->snapshot();
    if (!snap || !snap->hierarchy()) return;
    const auto& h = *snap->hierarchy();
    if (group >= h.groups.size() || group == hierarchy::kRootGroup) return;
    layout::Expansion e = snap->expanded;
    if (expand) {
        e = layout::withPathTo(h, std::move(e), group);
    } else {
        // Closing a group closes what is open inside it too (it comes back closed next time).
        for (auto it = e.lower_bound(group); it != e.end() && *it < h.group(group).subtreeEnd;) it = e.erase(it);
    }
    showExpansion(std::move(e));
}

void MainWindow::expandAllGroups() {
    if (SnapshotPtr snap = mainView_->snapshot(); snap && snap->hierarchy())
        showExpansion(layout::expansionToDepth(*snap->hierarchy(), 1 << 20));
}

void MainWindow::collapseToLevel(int level) {
    if (SnapshotPtr snap = mainView_->snapshot(); snap && snap->hierarchy())
        showExpansion(layout::expansionToDepth(*snap->hierarchy(), level));
}

void MainWindow::revealNode(ir::NodeId id) {
    SnapshotPtr snap = mainView_->snapshot();
    if (!snap || !snap->hierarchy() || !snap->graph->hasNode(id)) return;
    const auto g = snap->hierarchy()->groupOf(id);
    if (g == hierarchy::kNoGroup) return;
    showExpansion(layout::withPathTo(*snap->hierarchy(), snap->expanded, g), id);
}

void MainWindow::showExpansion(layout::Expansion expanded, ir::NodeId select) {
    SnapshotPtr base = mainView_->snapshot();
    if (!base || !base->layouter) return;
    progress_->show();
    cancel_->show();
    // The main view's channel: a newer layout or redraw supersedes this one (and stops it
    // between group layouts).
    auto failed = [this](const QString& error) {
        progress_->hide();
        cancel_->hide();
        showError(tr("Cannot draw the graph"), error);
    };
    mainLayout_->request([base, expanded = std::move(expanded)](const JobControl& c) { return redrawWith(base, expanded, c.cancelFlag()); },
                         [this, base, select](SnapshotPtr snap) {
        progress_->hide();
        cancel_->hide();
        layoutCache_[{base->model.get(), foldConstants_}] = snap;
        redrawing_ = true;
        showLaidOut(snap);
        redrawing_ = false;
        mainView_->setSearchHits(hits_);  // find's highlights, on the boxes drawn now
        if (select != ir::kNone) mainView_->selectNode(select);
        emit expansionShown();
    }, failed);
}

void MainWindow::updateBreadcrumb() {
    if (!breadcrumb_) return;
    SnapshotPtr snap = mainView_->snapshot();
    if (!snap || !snap->hierarchy()) return breadcrumb_->clear();
    const auto& h = *snap->hierarchy();
    QString text = tr("%1 groups (%2) · %3 open").arg(h.groups.size() - 1)
                       .arg(QString::fromStdString(std::string(hierarchy::sourceName(h.naming))))
                       .arg(snap->expanded.size() - 1);
    QString full = text;
    if (ir::NodeId id = mainView_->selectedNode(); id != ir::kNone) {
        QStringList path{tr("graph")};
        for (auto g : h.pathTo(id)) path << QString::fromStdString(h.group(g).name);
        path << QString::fromStdString(snap->graph->node(id).displayName());
        full = path.join(" ▸ ");
        // A deep path would push the status bar's other widgets off the window: keep the top and
        // the segments nearest the node, the whole path in the tooltip.
        text = elidePathMiddle(path, breadcrumb_->fontMetrics(), std::max(240, width() / 2));
    }
    breadcrumb_->setText(text);
    breadcrumb_->setToolTip(full);
}

QString elidePathMiddle(const QStringList& path, const QFontMetrics& metrics, int maxWidth) {
    const QString sep = " ▸ ";
    QString whole = path.join(sep);
    if (path.size() <= 2 || metrics.horizontalAdvance(whole) <= maxWidth) return whole;
    // The first segment, an ellipsis, then as many trailing segments as fit (at least the last).
    QStringList tail{path.back()};
    for (qsizetype i = path.size() - 2; i >= 1; --i) {
        QStringList candidate = tail;
        candidate.prepend(path[i]);
        if (metrics.horizontalAdvance(path.front() + sep + "…" + sep + candidate.join(sep)) > maxWidth) break;
        tail = candidate;
    }
    if (tail.size() == path.size() - 1) return whole;
    const QString head = path.front() + sep + "…" + sep;
    if (tail.size() == 1) {  // even the node's own name is too long: shorten it in its middle
        const int room = std::max(0, maxWidth - metrics.horizontalAdvance(head));
        return head + metrics.elidedText(path.back(), Qt::ElideMiddle, room);
    }
    return head + tail.join(sep);
}

}  // namespace passlens::ui

namespace passlens::ui {

void MainWindow::markChangedGroups() {
    SnapshotPtr snap = mainView_->snapshot();
    if (!snap || !snap->hierarchy() || shownDiff_.empty()) return;
    const auto& h = *snap->hierarchy();
    // Each added or changed node counts for the collapsed group drawn around it.
    std::map<uint32_t, int> changedIn;
    auto count = [&](ir::NodeId id) {
        for (hierarchy::GroupId g : h.pathTo(id))
            if (!snap->expanded.count(g)) { ++changedIn[g]; return; }
    };
    for (ir::NodeId id : shownDiff_.added) count(id);
    for (ir::NodeId id : shownDiff_.changed) count(id);
    for (const auto& [g, n] : changedIn) {
        NodeStyle style = styleFor(DiffState::Changed);
        style.badge = tr("%1 changed").arg(n);
        mainView_->setGroupStyle(g, style);
    }
}

}  // namespace passlens::ui
