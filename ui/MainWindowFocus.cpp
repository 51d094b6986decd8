// MainWindow: where the graph view looks after a redraw. A step or a run never lands on empty
// canvas: the selection stays centered, else the step's first change comes into view; Next
// Change walks through the changes of the shown step.
#include <QGraphicsScene>
#include <QStatusBar>
#include <QTabWidget>

#include "MainWindow.h"
#include "PropertiesPanel.h"
#include "graph/GraphView.h"
#include "stepper/ChangeSpots.h"

namespace passlens::ui {

void MainWindow::focusAfterRedraw(const GraphViewState& before, ir::NodeId kept) {
    lastChangeSpot_ = ir::kNone;
    if (!before.valid) return;  // a new model: its first view (GraphView::showReadableOverview) stands
    if (kept != ir::kNone && mainView_->itemForNode(kept)) {
        mainView_->restoreViewState(before);
        mainView_->selectKeepingZoom(kept);
        return;
    }
    if (kept != ir::kNone) properties_->showNothing();  // the selected node is gone from this snapshot
    const SnapshotPtr snap = mainView_->snapshot();
    const std::vector<ChangeSpot> spots =
        snap && shownRow_ > 0 ? changeSpots(*snap, shownDiff_, mainView_->ghostRects()) : std::vector<ChangeSpot>{};
    mainView_->restoreViewState(before);
    if (!spots.empty()) return mainView_->bringIntoView(spots.front().rect);
    // Same graph, nothing changed here (row 0 after a run, a pass without effect, a regrouping):
    // the user's view, unless the new drawing left it empty.
    if (!mainView_->showsAnyBox()) mainView_->showReadableOverview();
}

void MainWindow::focusOnLateGhosts() {
    const SnapshotPtr snap = mainView_->snapshot();
    if (!snap || shownRow_ <= 0 || mainView_->selectedNode() != ir::kNone) return;
    const auto ghosts = mainView_->ghostRects();
    StepDiff removedOnly;
    removedOnly.removed = shownDiff_.removed;
    // Added or changed boxes already had their turn; only a step that removed alone waits for its ghosts.
    if (!changeSpots(*snap, shownDiff_).empty() || ghosts.empty()) return;
    mainView_->bringIntoView(changeSpots(*snap, removedOnly, ghosts).front().rect);
}

void MainWindow::showNextChange(int step) {
    const SnapshotPtr snap = mainView_->snapshot();
    if (!snap || shownRow_ <= 0) {
        statusBar()->showMessage(tr("No pass is shown: run the passes and step to one first."), 5000);
        return;
    }
    const std::vector<ChangeSpot> spots = changeSpots(*snap, shownDiff_, mainView_->ghostRects());
    if (spots.empty()) {
        statusBar()->showMessage(tr("This pass changed nothing in the drawn graph."), 5000);
        return;
    }
    ir::NodeId current = mainView_->selectedNode();
    if (std::none_of(spots.begin(), spots.end(), [&](const ChangeSpot& s) { return s.node == current; }))
        current = lastChangeSpot_;
    const ChangeSpot& next = *nextChangeSpot(spots, current, step);
    lastChangeSpot_ = next.node;
    tabs_->setCurrentIndex(0);
    if (next.state == DiffState::Removed) {  // a ghost: not selectable, only shown
        mainView_->scene()->clearSelection();
        mainView_->centerOn(next.rect.center());
    } else if (next.drawn) {
        mainView_->selectNode(next.node);
    } else {
        revealNode(next.node);  // opens its group, then selects it
    }
    const auto index = std::find_if(spots.begin(), spots.end(), [&](const ChangeSpot& s) { return s.node == next.node; }) - spots.begin();
    const QString what = next.state == DiffState::Added ? tr("added") : next.state == DiffState::Removed ? tr("removed") : tr("changed");
    statusBar()->showMessage(tr("Change %1 of %2: %3").arg(index + 1).arg(spots.size()).arg(what), 5000);
}

}  // namespace passlens::ui
