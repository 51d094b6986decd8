// MainWindow's pass-stepper part: the stepper, change log, remarks and memory docks, the diff
// styling of the shown snapshot, the side-by-side before pane and the exports of a run.
#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QStringList>
#include <QTextBrowser>
#include <QTextCursor>

#include "LatestJob.h"
#include "MainWindow.h"
#include "PropertiesPanel.h"
#include "graph/GraphView.h"
#include "memory/MemoryChartWidget.h"
#include "memory/MemoryView.h"
#include "onnx/Export.h"
#include "passes/Diff.h"
#include "onnx/ModelInfo.h"
#include "passes/Diff.h"
#include "passes/Report.h"
#include "passes/layout/LayoutPasses.h"
#include "graph/LayoutJob.h"
#include "stepper/GhostPlacement.h"
#include "stepper/LogPanels.h"
#include "stepper/StepperPanel.h"

namespace passlens::ui {

void MainWindow::buildStepperDocks() {
    auto dock = [this](QWidget* w, const QString& title, const char* name, Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(w);
        addDockWidget(area, d);
        return d;
    };
    stepper_ = new StepperPanel(this);
    dock(stepper_, tr("Pass Stepper"), "stepper", Qt::LeftDockWidgetArea);
    changeLog_ = new ChangeLogPanel(this);
    QDockWidget* logDock = dock(changeLog_, tr("Change Log"), "changeLog", Qt::BottomDockWidgetArea);
    remarks_ = new RemarksPanel(this);
    QDockWidget* remarkDock = dock(remarks_, tr("Remarks"), "remarks", Qt::BottomDockWidgetArea);
    // The charts fill the dock and grow with it (side by side in a wide, short dock); below the
    // view's minimum size the scroll area scrolls instead of widening the window.
    memory_ = new MemoryView(this);
    auto* memScroll = new QScrollArea(this);
    memScroll->setWidget(memory_);
    memScroll->setWidgetResizable(true);
    memScroll->setFrameShape(QFrame::NoFrame);
    QDockWidget* memDock = dock(memScroll, tr("Memory"), "memory", Qt::BottomDockWidgetArea);
    splitDockWidget(logDock, remarkDock, Qt::Horizontal);
    tabifyDockWidget(remarkDock, memDock);
    remarkDock->raise();

    connect(memDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible && pendingMemory_.first) showMemoryOf(pendingMemory_.first, pendingMemory_.second);
    });
    connect(stepper_, &StepperPanel::stepChosen, this, &MainWindow::showStep);
    connect(stepper_, &StepperPanel::runFinished, this, &MainWindow::openBottomDocksAfterRun);
    connect(stepper_, &StepperPanel::runFailed, this, [this](const QString& m) { statusBar()->showMessage(m, 8000); });
    connect(changeLog_, &ChangeLogPanel::nodesActivated, this, &MainWindow::selectNodes);
    connect(remarks_, &RemarksPanel::nodesActivated, this, &MainWindow::selectNodes);
    connect(memory_, &MemoryView::nodesRequested, this, &MainWindow::selectNodes);
    connect(beforeView_, &GraphView::nodeSelected, this, [this](ir::NodeId id) {
        if (id != ir::kNone) properties_->showNode(beforeView_->snapshot(), id);
        syncSelection(beforeView_, id);
    });
}

void MainWindow::sizeDocks() {
    // First start: the graph gets most of the window. One column on the right, the stepper above
    // the node's properties (tabs: Properties, Why Not Fused?, Model); the bottom docks are one
    // tab group, closed until a pipeline has run (they only have something to say after one).
    auto* step = findChild<QDockWidget*>("stepper");
    auto* props = findChild<QDockWidget*>("properties");
    if (step && props) {
        removeDockWidget(step);
        addDockWidget(Qt::RightDockWidgetArea, step);
        step->show();
        splitDockWidget(step, props, Qt::Vertical);
        for (const char* name : {"whyNotFused", "model"})
            if (auto* d = findChild<QDockWidget*>(name)) tabifyDockWidget(props, d);
        props->raise();
        resizeDocks({step}, {340}, Qt::Horizontal);
        resizeDocks({step, props}, {380, 420}, Qt::Vertical);
    }
    QDockWidget* first = nullptr;
    for (const char* name : {"changeLog", "remarks", "memory", "dominatorTree"}) {
        auto* d = findChild<QDockWidget*>(name);
        if (!d) continue;
        if (first) tabifyDockWidget(first, d);
        else first = d;
        d->hide();
    }
    bottomClosedAtStart_ = first != nullptr;
}

void MainWindow::openBottomDocksAfterRun() {
    // Once per window: the user may close them again and keep them closed.
    if (!bottomClosedAtStart_) return;
    bottomClosedAtStart_ = false;
    for (const char* name : {"changeLog", "remarks", "memory", "dominatorTree"})
        if (auto* d = findChild<QDockWidget*>(name)) d->show();
    if (auto* log = findChild<QDockWidget*>("changeLog")) {
        log->raise();
        resizeDocks({log}, {qMax(260, height() / 3)}, Qt::Vertical);
    }
}

void MainWindow::buildStepperMenu(QMenu* file) {
    file->addAction(tr("Export Pass &Report (JSON)…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export pass report"), {}, tr("JSON (*.json)"));
        if (!path.isEmpty() && !exportPassReport(path)) showError(tr("Cannot export"), tr("Run a pipeline first, or check that %1 is writable").arg(path));
    });
    file->addAction(tr("Export &Optimized Model (ONNX)…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export optimized model"), {}, tr("ONNX model (*.onnx)"));
        if (!path.isEmpty() && !exportOptimizedModel(path)) showError(tr("Cannot export"), tr("Run a pipeline first, or check that %1 is writable").arg(path));
    });
    file->addAction(tr("Export &Memory Charts…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export memory charts"), {}, tr("PNG images (*.png);;SVG drawings (*.svg)"));
        if (!path.isEmpty() && !exportMemoryCharts(path)) showError(tr("Cannot export"), tr("No memory plan to export, or %1 is not writable").arg(path));
    });

    QMenu* pipe = menuBar()->addMenu(tr("&Passes"));
    QAction* run = pipe->addAction(tr("&Run Pipeline"), stepper_, &StepperPanel::run);
    run->setShortcut(QKeySequence(tr("Ctrl+R")));
    run->setObjectName("runPipelineAction");
    runAction_ = run;
    QAction* fwd = pipe->addAction(tr("Step &Forward"), stepper_, &StepperPanel::stepForward);
    fwd->setShortcuts({QKeySequence(Qt::ALT | Qt::Key_Right), QKeySequence(Qt::Key_F10)});
    QAction* back = pipe->addAction(tr("Step &Back"), stepper_, &StepperPanel::stepBack);
    back->setShortcuts({QKeySequence(Qt::ALT | Qt::Key_Left), QKeySequence(Qt::SHIFT | Qt::Key_F10)});
    pipe->addAction(tr("&Cancel Run"), stepper_, &StepperPanel::cancel);
    pipe->addSeparator();
    QAction* nextChange = pipe->addAction(tr("&Next Change"), this, [this] { showNextChange(1); });
    nextChange->setObjectName("nextChangeAction");
    nextChange->setShortcut(QKeySequence(Qt::Key_F8));
    nextChange->setToolTip(tr("Select the next node the shown pass added or changed (reading order), or show the next removed one"));
    QAction* prevChange = pipe->addAction(tr("&Previous Change"), this, [this] { showNextChange(-1); });
    prevChange->setObjectName("previousChangeAction");
    prevChange->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8));
    pipe->addSeparator();
    QAction* side = pipe->addAction(tr("&Side by Side (Before | After)"));
    side->setObjectName("sideBySideAction");
    side->setCheckable(true);
    side->setShortcut(QKeySequence(tr("Ctrl+B")));
    connect(side, &QAction::toggled, this, &MainWindow::setSideBySide);
}

void MainWindow::resetStepper() {
    shownRow_ = -1;
    shownDiff_ = {};
    beforeLayout_->cancel();
    beforeView_->setSnapshot(nullptr);
    beforeView_->clearNodeStyles();
    stepper_->setModel(model_);
    changeLog_->showPass(nullptr);
    remarks_->showPass(nullptr);
    showMemoryOf(shown_, title_);
    updateDomainNotice();
}

void MainWindow::showMemoryOf(std::shared_ptr<const ir::Model> m, const QString& title) {
    // Planning a large model's memory takes seconds of a core the drawing needs: it waits until
    // the Memory dock is on screen.
    auto* dock = findChild<QDockWidget*>("memory");
    if (m && m->graph.nodeCount() > kDeferredDockNodes && dock && !dock->isVisible()) {
        pendingMemory_ = {std::move(m), title};
        memory_->setGraph(nullptr, nullptr);
        return;
    }
    pendingMemory_ = {};
    memory_->setGraph(m, m ? &m->graph : nullptr, title);
}

void MainWindow::showStep(int row) {
    PipelineRunPtr run = stepper_->lastRun();
    auto m = modelForRow(row);
    if (!m) return;
    shownRow_ = row;
    shown_ = m;
    auto prev = modelForRow(row - 1);
    shownDiff_ = prev ? computeStepDiff(prev->graph, m->graph) : StepDiff{};
    const passes::PipelineStep* step = run->stepAt(row);
    changeLog_->showPass(step ? &step->result : nullptr);
    remarks_->showPass(step ? &step->result : nullptr);
    const QString stepTitle = step ? tr("%1 after %2").arg(title_, QString::fromStdString(step->result.name)) : title_;
    showMemoryOf(shown_, stepTitle);
    modelInfo_->setPlainText(QString::fromStdString(onnxio::modelInfoToText(onnxio::describeModel(*shown_))));
    // The status bar's facts are the shown snapshot's, named.
    facts_->setText(factsText(*shown_, step ? tr("after %1").arg(QString::fromStdString(step->result.name)) : tr("input model")));
    updateDomainNotice();
    // What the node diff cannot show: functions, opset imports, IR version (group-functions,
    // version-convert, the layout pass's domain).
    shownModelDiff_ = prev ? QString::fromStdString(passes::diffModelLevel(*prev, *m).summary()) : QString();
    if (step)
        statusBar()->showMessage(tr("Pass %1 of %2: %3 — %4 added, %5 changed, %6 removed%7")
                                     .arg(row).arg(run->rowCount() - 1).arg(QString::fromStdString(step->result.name))
                                     .arg(shownDiff_.added.size()).arg(shownDiff_.changed.size()).arg(shownDiff_.removed.size())
                                     .arg(shownModelDiff_.isEmpty() ? QString() : "; " + shownModelDiff_),
                                 8000);
    startLayout();
    if (sideBySide_) showBeforePane();
}

void MainWindow::applyDiffStyles() {
    // Rings: added green, changed orange and hatched (fills stay the op categories). Removed nodes are not in this snapshot: they are ghost items
    // (showGhosts) or red boxes of the before pane, so the node items stay exactly the snapshot's.
    mainView_->setDiffMode(shownRow_ > 0);  // unchanged boxes washed out: the marked ones stand out
    for (ir::NodeId id : shownDiff_.added) mainView_->setNodeStyle(id, styleFor(DiffState::Added));
    for (ir::NodeId id : shownDiff_.changed) mainView_->setNodeStyle(id, styleFor(DiffState::Changed));
    markChangedGroups();
    updateCaption();
}

void MainWindow::updateCaption() {
    PipelineRunPtr run = stepper_->lastRun();
    const passes::PipelineStep* step = run && shownRow_ > 0 ? run->stepAt(shownRow_) : nullptr;
    if (!step) return mainView_->setCaption({});
    const QString title = tr("after %1").arg(QString::fromStdString(step->result.name));
    mainView_->setCaption(shownModelDiff_.isEmpty() ? title : title + "  ·  " + shownModelDiff_,
                          {{diffColor(DiffState::Added), tr("%1 added").arg(shownDiff_.added.size())},
                           {diffColor(DiffState::Changed), tr("%1 changed").arg(shownDiff_.changed.size())},
                           {diffColor(DiffState::Removed),
                            tr("%1 removed").arg(shownDiff_.removed.size())}});
}

std::shared_ptr<const ir::Model> MainWindow::modelForRow(int row) const {
    // Row 0 is the loaded model itself (same ids as the run's copy), so its drawing is reused.
    PipelineRunPtr run = stepper_->lastRun();
    if (!run || row < 0 || row >= run->rowCount()) return nullptr;
    return row == 0 ? model_ : run->modelAt(row);
}

void MainWindow::showGhosts() {
    // Single view: the removed nodes stand as red ghosts where they were, anchored to their
    // nearest surviving neighbour. Side by side, the before pane shows them instead.
    mainView_->setGhosts({}, {});
    auto prev = modelForRow(shownRow_ - 1);
    SnapshotPtr after = mainView_->snapshot();
    if (sideBySide_ || shownDiff_.removed.empty() || !prev || !after) return;
    layoutModel(*ghostLayout_, prev, [this, after](SnapshotPtr before, QString) {
        if (!before || mainView_->snapshot() != after) return;  // the view moved on
        std::vector<GraphView::Ghost> ghosts;
        for (const auto& g : placeGhosts(before->display, before->layout, after->display, after->layout, shownDiff_.removed))
            ghosts.push_back({g.node, QRectF(g.rect.x, g.rect.y, g.rect.width, g.rect.height),
                              QString::fromStdString(g.title), QString::fromStdString(g.subtitle)});
        mainView_->setGhosts(ghosts, styleFor(DiffState::Removed));
        focusOnLateGhosts();
        emit ghostsShown(int(ghosts.size()));
    }, openGroupPaths(after));  // the step before with the same groups open: its removed nodes have boxes
}

void MainWindow::setSideBySide(bool on) {
    sideBySide_ = on;
    beforeView_->setVisible(on);
    // Two half-width panes have no room for the category legend next to their captions.
    auto* legend = findChild<QAction*>("legendAction");
    mainView_->setLegendVisible(!on && (!legend || legend->isChecked()));
    if (auto* a = findChild<QAction*>("sideBySideAction"); a && a->isChecked() != on) {
        const QSignalBlocker block(a);
        a->setChecked(on);
    }
    if (on) {
        split_->setSizes({split_->width() / 2, split_->width() / 2});
        showBeforePane();
    }
    if (mainView_->snapshot()) showGhosts();
}

void MainWindow::showBeforePane() {
    PipelineRunPtr run = stepper_->lastRun();
    auto prev = modelForRow(shownRow_ - 1);
    if (!prev) {  // nothing before the input model: show it unmarked
        beforeLayout_->cancel();
        beforeView_->clearNodeStyles();
        beforeView_->setSnapshot(mainView_->snapshot());
        beforeView_->setCaption(run ? tr("input model") : QString());
        return;
    }
    const QString caption = shownRow_ == 1 ? tr("before: input model")
                                           : tr("before: after %1").arg(QString::fromStdString(run->stepAt(shownRow_ - 1)->result.name));
    layoutModel(*beforeLayout_, prev, [this, caption](SnapshotPtr snap, QString) {
        if (!snap) return;
        beforeView_->clearNodeStyles();
        beforeView_->setDiffMode(true);
        beforeView_->setSnapshot(snap);
        beforeView_->setCaption(caption, {{diffColor(DiffState::Removed), tr("removed")},
                                          {diffColor(DiffState::Changed), tr("changed")}});
        for (ir::NodeId id : shownDiff_.removed) beforeView_->setNodeStyle(id, styleFor(DiffState::Removed));
        for (ir::NodeId id : shownDiff_.changed) beforeView_->setNodeStyle(id, styleFor(DiffState::Changed));
        if (ir::NodeId sel = mainView_->selectedNode(); sel != ir::kNone) syncSelection(mainView_, sel);
    });
}

void MainWindow::selectNodes(const std::vector<ir::NodeId>& nodes) {
    // The first drawn node is selected and centered, the others highlighted. Nodes gone from the
    // shown snapshot (removed by the pass) are looked up in the before pane.
    GraphView* view = mainView_;
    std::vector<ir::NodeId> drawn;
    for (ir::NodeId n : nodes)
        if (mainView_->itemForNode(n)) drawn.push_back(n);
    if (drawn.empty() && sideBySide_)
        for (ir::NodeId n : nodes)
            if (beforeView_->itemForNode(n)) drawn.push_back(n), view = beforeView_;
    if (drawn.empty()) {
        // Inside collapsed groups: open the groups that hold them, then select the first.
        SnapshotPtr snap = mainView_->snapshot();
        if (snap && snap->hierarchy()) {
            layout::Expansion expanded = snap->expanded;
            ir::NodeId first = ir::kNone;
            for (ir::NodeId n : nodes) {
                if (!snap->graph->hasNode(n)) continue;
                const auto g = snap->hierarchy()->groupOf(n);
                if (g == hierarchy::kNoGroup) continue;
                expanded = layout::withPathTo(*snap->hierarchy(), expanded, g);
                if (first == ir::kNone) first = n;
            }
            if (first != ir::kNone) return showExpansion(std::move(expanded), first);
        }
        statusBar()->showMessage(tr("These nodes are not in the shown snapshot (removed by the pass; turn on Side by Side to see them)."), 6000);
        return;
    }
    tabs_->setCurrentIndex(0);
    view->setSearchHits(std::vector<ir::NodeId>(drawn.begin() + 1, drawn.end()));
    view->selectNode(drawn.front());
}

void MainWindow::syncSelection(GraphView* from, ir::NodeId id) {
    if (syncing_ || !sideBySide_ || id == ir::kNone) return;
    GraphView* other = from == mainView_ ? beforeView_ : mainView_;
    syncing_ = true;
    if (other->itemForNode(id)) other->selectNode(id);
    else other->scene()->clearSelection();
    syncing_ = false;
}

void MainWindow::appendProvenance(ir::NodeId id) {
    PipelineRunPtr run = stepper_->lastRun();
    SnapshotPtr snap = mainView_->snapshot();
    if (id == ir::kNone || !run || !run->result || !snap || !snap->graph->hasNode(id)) return;
    const ir::Node& n = snap->graph->node(id);
    if (n.provenance.empty()) return;
    QStringList names;
    for (const auto& s : provenanceNames(n, run->result->initial->graph)) names << QString::fromStdString(s).toHtmlEscaped();
    // On top, so it is seen without scrolling past attributes and weight histograms.
    QTextCursor top(properties_->document());
    top.movePosition(QTextCursor::Start);
    top.insertHtml(tr("<table width='100%' cellpadding='4' style='background:#dafbe1'><tr><td><b>came from</b> "
                      "(%1 original nodes): %2</td></tr></table><br>")
                       .arg(names.size())
                       .arg(names.join(", ")));
}

void MainWindow::updateDomainNotice() {
    const QString text = domainNotice();
    domainNotice_->setText(text);
    domainNotice_->setToolTip(tr("Other ONNX tools will not run this model; export it after converting back to NCHW."));
    domainNotice_->setVisible(!text.isEmpty());
}

QString MainWindow::domainNotice() const {
    if (!shown_) return {};
    const auto domains = passes::nonStandardDomains(*shown_);
    if (domains.empty()) return {};
    QStringList l;
    for (const auto& d : domains) l << QString::fromStdString(d);
    return tr("not standard ONNX: uses %1").arg(l.join(", "));
}

bool MainWindow::exportPassReport(const QString& path) {
    PipelineRunPtr run = stepper_->lastRun();
    if (!run || !run->result) return false;
    nlohmann::ordered_json j;
    j["model"] = title_.toStdString();
    j["requested_passes"] = run->passNames;
    j["nodes_before"] = passes::countNodesDeep(run->result->initial->graph);
    j["nodes_after"] = passes::countNodesDeep((run->result->steps.empty() ? run->result->initial : run->result->steps.back().snapshot)->graph);
    const nlohmann::ordered_json pipeline = passes::pipelineToJson(*run->result);
    for (const auto& [key, value] : pipeline.items()) j[key] = value;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    const std::string text = j.dump(2) + "\n";
    return f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

bool MainWindow::exportOptimizedModel(const QString& path) {
    PipelineRunPtr run = stepper_->lastRun();
    if (!run || !run->result) return false;
    const auto& last = run->result->steps.empty() ? run->result->initial : run->result->steps.back().snapshot;
    try {
        onnxio::exportModelFile(*last, path.toStdString());
        return true;
    } catch (const std::exception& e) {
        statusBar()->showMessage(QString::fromStdString(e.what()), 8000);
        return false;
    }
}

bool MainWindow::exportMemoryCharts(const QString& path) {
    if (!memory_->snapshot().primary) return false;
    const QFileInfo info(path);
    const bool svg = info.suffix().compare("svg", Qt::CaseInsensitive) == 0;
    const QString base = info.absolutePath() + "/" + info.completeBaseName();
    struct Chart { MemoryChartWidget* w; const char* suffix; };
    const Chart charts[] = {{memory_->lifetimeChart(), "lifetime"}, {memory_->arenaChart(0), "arena"}, {memory_->liveBytesChart(0), "live"}};
    for (const auto& c : charts) {
        const QString file = QString("%1-%2.%3").arg(base, c.suffix, svg ? "svg" : "png");
        if (!(svg ? c.w->exportSvg(file, {1200, 600}) : c.w->exportPng(file, {1200, 600}))) return false;
    }
    return true;
}

}  // namespace passlens::ui
