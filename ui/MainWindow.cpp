#include "MainWindow.h"
#include "analysis/FusionReasons.h"
#include "eval/Interpreter.h"
#include "training/TrainingController.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include "LatestJob.h"
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTabBar>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <algorithm>
#include <chrono>
#include <utility>
#include <map>

#include "PropertiesPanel.h"
#include "analysis/DominatorTreeView.h"
#include "analysis/FusionGroups.h"
#include "analysis/GraphHighlighter.h"
#include "analysis/WhyNotFusedPanel.h"
#include "examples/Examples.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "memory/MemoryView.h"
#include "ir/Error.h"
#include "onnx/Import.h"
#include "onnx/ModelInfo.h"
#include "pipeline/Explain.h"
#include "stepper/PipelineJob.h"
#include "stepper/StepperPanel.h"

namespace passlens::ui {

namespace {
constexpr int kMaxRecent = 8;
}

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), clusterJob_(std::make_unique<LatestJob<FusionClusters>>()),
      mainLayout_(std::make_unique<LatestJob<SnapshotPtr>>()), ghostLayout_(std::make_unique<LatestJob<SnapshotPtr>>()),
      beforeLayout_(std::make_unique<LatestJob<SnapshotPtr>>()) {
    setWindowTitle("PassLens");
    setAcceptDrops(true);
    tabs_ = new QTabWidget(this);
    tabs_->setDocumentMode(true);
    tabs_->setTabsClosable(true);
    // Tab 0: the graph, with the stepper's "before" pane to its left in side-by-side mode.
    split_ = new QSplitter(Qt::Horizontal, tabs_);
    beforeView_ = new GraphView(split_);
    beforeView_->setObjectName("beforeView");
    beforeView_->setLegendVisible(false);
    beforeView_->setMinimapVisible(false);
    beforeView_->hide();
    mainView_ = new GraphView(split_);
    mainView_->setObjectName("graphView");
    split_->addWidget(beforeView_);
    split_->addWidget(mainView_);
    tabs_->addTab(split_, tr("Graph"));
    tabs_->tabBar()->setTabButton(0, QTabBar::RightSide, nullptr);  // the main graph stays
    connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int i) {
        if (i > 0) { QWidget* w = tabs_->widget(i); tabs_->removeTab(i); w->deleteLater(); }
    });
    setCentralWidget(tabs_);
    connect(mainView_, &GraphView::nodeSelected, this, &MainWindow::onNodeSelected);
    connect(mainView_, &GraphView::valueSelected, this, [this](ir::ValueId v) {
        properties_->showValue(mainView_->snapshot(), v);
        memory_->selectValue(v);
    });
    connect(mainView_, &GraphView::subgraphRequested, this, &MainWindow::openSubgraph);
    connect(mainView_, &GraphView::groupToggleRequested, this, &MainWindow::setGroupExpanded);

    // The right column runs to the bottom: a taller bottom dock takes height from the graph,
    // never from the pass list.
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    buildDocks();
    buildMenus();
    buildAnalysisDocks();
    new TrainingController(this);  // Passes → Build Training Graph…, View → Show Values…, backward styles
    buildPanelsMenu();

    facts_ = new QLabel(this);
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 0);
    progress_->setMaximumWidth(160);
    progress_->setFormat(tr("Laying out…"));
    cancel_ = new QToolButton(this);
    cancel_->setText(tr("Cancel"));
    connect(cancel_, &QToolButton::clicked, this, &MainWindow::cancelLayout);
    statusBar()->addWidget(facts_, 1);
    domainNotice_ = new QLabel(this);
    domainNotice_->setObjectName("domainNotice");
    domainNotice_->setStyleSheet("QLabel { background: #fff3cd; color: #7a4b00; border: 1px solid #e0b252;"
                                 " border-radius: 3px; padding: 1px 6px; }");
    domainNotice_->hide();
    statusBar()->addPermanentWidget(domainNotice_);
    statusBar()->addPermanentWidget(progress_);
    statusBar()->addPermanentWidget(cancel_);
    progress_->hide();
    cancel_->hide();

    QSettings settings;
    resize(1440, 900);
    restoreGeometry(settings.value("window/geometry").toByteArray());
    // A state saved by a build with another dock layout is dropped (restoreState checks the
    // version), so the docks come back as this build lays them out rather than as a stale mix.
    restoredState_ = restoreState(settings.value("window/state").toByteArray(), kWindowStateVersion);
    foldConstants_ = settings.value("view/foldConstants", true).toBool();
}

MainWindow::~MainWindow() {
    // The jobs stop their workers (a redraw ends between groups) and wait; nothing is delivered.
    // No child's signal may reach this window once its destructor has run: ~QObject deletes the
    // children afterwards, and a dock hidden then emits visibilityChanged into a lambda on `this`.
    for (QObject* child : findChildren<QObject*>()) child->disconnect(this);
}

void MainWindow::buildDocks() {
    properties_ = new PropertiesPanel(this);
    auto* propDock = new QDockWidget(tr("Properties"), this);
    propDock->setObjectName("properties");
    propDock->setWidget(properties_);
    addDockWidget(Qt::RightDockWidgetArea, propDock);

    modelInfo_ = new QTextBrowser(this);
    auto* infoDock = new QDockWidget(tr("Model"), this);
    infoDock->setObjectName("model");
    infoDock->setWidget(modelInfo_);
    addDockWidget(Qt::RightDockWidgetArea, infoDock);
    resizeDocks({propDock, infoDock}, {360, 360}, Qt::Horizontal);
    resizeDocks({propDock, infoDock}, {520, 280}, Qt::Vertical);
    buildStepperDocks();
}

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, [this] {
        QSettings s;
        QString path = QFileDialog::getOpenFileName(this, tr("Open ONNX model"), s.value("lastDir").toString(),
                                                    tr("ONNX models (*.onnx);;All files (*)"));
        if (!path.isEmpty()) {
            s.setValue("lastDir", QFileInfo(path).absolutePath());
            openFile(path);
        }
    });
    open->setShortcut(QKeySequence::Open);
    QMenu* examples = file->addMenu(tr("&Examples"));
    for (const auto& ex : examples::all()) {
        QAction* a = examples->addAction(QString::fromStdString(ex.title));
        a->setToolTip(QString::fromStdString(ex.topic));
        a->setStatusTip(QString::fromStdString(ex.topic));
        connect(a, &QAction::triggered, this, [this, id = QString::fromStdString(ex.id)] { openExample(id); });
    }
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    buildCompareAction(file);
    file->addSeparator();
    file->addAction(tr("&Export View…"), this, [this] {
        QString path = QFileDialog::getSaveFileName(this, tr("Export view"), {}, tr("PNG image (*.png);;SVG drawing (*.svg)"));
        if (!path.isEmpty() && !exportImage(path)) showError(tr("Cannot export"), tr("Could not write %1").arg(path));
    })->setShortcut(QKeySequence(tr("Ctrl+E")));
    buildStepperMenu(file);
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(tr("Zoom &In"), this, [this] { currentView()->zoomIn(); })->setShortcuts({QKeySequence::ZoomIn, QKeySequence(tr("Ctrl+="))});
    view->addAction(tr("Zoom &Out"), this, [this] { currentView()->zoomOut(); })->setShortcut(QKeySequence::ZoomOut);
    view->addAction(tr("&Fit"), this, [this] { currentView()->fitAll(); })->setShortcut(QKeySequence(tr("Ctrl+0")));
    view->addSeparator();
    QAction* fold = view->addAction(tr("Fold &Constants into Consumers"));
    fold->setCheckable(true);
    fold->setChecked(foldConstants_);
    connect(fold, &QAction::toggled, this, &MainWindow::setFoldConstants);
    QAction* legend = view->addAction(tr("&Legend"));
    legend->setObjectName("legendAction");
    legend->setCheckable(true);
    legend->setChecked(true);
    connect(legend, &QAction::toggled, this, [this](bool on) { mainView_->setLegendVisible(on); });
    QAction* mini = view->addAction(tr("&Overview Map"));
    mini->setCheckable(true);
    mini->setChecked(true);
    connect(mini, &QAction::toggled, this, [this](bool on) { mainView_->setMinimapVisible(on); });
    buildGroupMenu(view);

    // Find bar.
    QToolBar* bar = addToolBar(tr("Find"));
    bar->setObjectName("findbar");
    bar->setMovable(false);
    findEdit_ = new QLineEdit(bar);
    findEdit_->setPlaceholderText(tr("Find by name or op type, op:Softmax (Ctrl+F)"));
    findEdit_->setClearButtonEnabled(true);
    findEdit_->setMaximumWidth(360);
    findStatus_ = new QLabel(bar);
    findStatus_->setMinimumWidth(80);
    bar->addWidget(findEdit_);
    bar->addAction(tr("◀"), this, &MainWindow::findPrevious)->setToolTip(tr("Previous match (Shift+F3)"));
    bar->addAction(tr("▶"), this, &MainWindow::findNext)->setToolTip(tr("Next match (F3)"));
    bar->addWidget(findStatus_);
    bar->addSeparator();
    bar->addAction(tr("Fit"), this, [this] { currentView()->fitAll(); });
    bar->addAction(tr("−"), this, [this] { currentView()->zoomOut(); });
    bar->addAction(tr("+"), this, [this] { currentView()->zoomIn(); });
    buildDimsField(bar);
    connect(findEdit_, &QLineEdit::textChanged, this, &MainWindow::find);
    connect(findEdit_, &QLineEdit::returnPressed, this, [this] {
        if (QApplication::keyboardModifiers() & Qt::ShiftModifier) findPrevious(); else findNext();
    });
    QAction* findAct = view->addAction(tr("&Find…"), this, [this] { findEdit_->setFocus(); findEdit_->selectAll(); });
    findAct->setShortcut(QKeySequence::Find);
    view->addAction(tr("Find &Next"), this, &MainWindow::findNext)->setShortcut(QKeySequence::FindNext);
    view->addAction(tr("Find &Previous"), this, &MainWindow::findPrevious)->setShortcut(QKeySequence::FindPrevious);
    new QShortcut(QKeySequence(Qt::Key_Escape), findEdit_, [this] { findEdit_->clear(); currentView()->setFocus(); });
}

void MainWindow::buildPanelsMenu() {
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&View")) {
            QMenu* panels = a->menu()->addMenu(tr("&Panels"));
            panels->setObjectName("panelsMenu");
            for (QDockWidget* d : findChildren<QDockWidget*>()) panels->addAction(d->toggleViewAction());
        }
}

void MainWindow::rebuildRecentMenu() {
    recentMenu_->clear();
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& p : recent)
        recentMenu_->addAction(QFileInfo(p).fileName(), this, [this, p] { openFile(p); })->setToolTip(p);
    recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::addRecent(const QString& path) {
    QSettings s;
    QStringList recent = s.value("recentFiles").toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    recent.removeAll(abs);
    recent.prepend(abs);
    while (recent.size() > kMaxRecent) recent.removeLast();
    s.setValue("recentFiles", recent);
    rebuildRecentMenu();
}

bool MainWindow::openFile(const QString& path) {
    try {
        const auto t0 = std::chrono::steady_clock::now();
        auto m = std::make_shared<ir::Model>(onnxio::importModelFile(path.toStdString()));
        importSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        setModel(std::move(m), QFileInfo(path).fileName());
        filePath_ = path;
        addRecent(path);
        return true;
    } catch (const std::exception& e) {
        const std::string why = e.what();
        if (onnxio::isUnknownOpError(why)) {
            // Well formed, only beyond what this build knows: show it, but run nothing on it.
            try {
                onnxio::ImportOptions lenient;
                lenient.validateOps = false;
                auto m = std::make_shared<ir::Model>(onnxio::importModelFile(path.toStdString(), lenient));
                ir::NodeId named = ir::kNone;
                if (auto q = why.find("node '"); q != std::string::npos) {
                    const auto end = why.find('\'', q + 6);
                    if (end != std::string::npos)
                        if (auto id = m->graph.findNode(why.substr(q + 6, end - q - 6))) named = *id;
                }
                setModel(std::move(m), QFileInfo(path).fileName());
                setReadOnly(QString::fromStdString(why), named);
                addRecent(path);
                return true;
            } catch (const std::exception&) {
                // fall through to the first error, which names the real problem
            }
        }
        showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), QString::fromStdString(why));
        return false;
    }
}

QString MainWindow::factsLine() const { return facts_->text(); }

QString MainWindow::factsText(const ir::Model& m, const QString& snapshot) const {
    const auto info = onnxio::describeModel(m);
    const size_t inside = info.nodeCountWithSubgraphs - info.nodeCount;
    QString text = tr("%1 nodes%2 · %3 parameters · opset %4")
                       .arg(info.nodeCount)
                       .arg(inside ? tr(" (+%1 inside subgraphs)").arg(inside) : QString())
                       .arg(QLocale().toString(qlonglong(info.parameterCount)))
                       .arg(m.opsetFor(""));
    return snapshot.isEmpty() ? text : snapshot + ": " + text;
}

void MainWindow::setReadOnly(const QString& reason, ir::NodeId node) {
    readOnlyReason_ = reason;
    readOnlyNode_ = node;
    const bool editable = reason.isEmpty();
    stepper_->setEnabled(editable);
    if (runAction_) runAction_->setEnabled(editable);
    if (editable) facts_->setToolTip({});
    if (!editable) {
        facts_->setText(facts_->text() + tr(" · read-only"));
        facts_->setToolTip(reason);
        statusBar()->showMessage(tr("Read-only: %1. Passes are off for this model.").arg(reason));
    }
}

void MainWindow::openExample(const QString& id) {
    const auto* ex = examples::find(id.toStdString());
    if (!ex) return showError(tr("Unknown example"), id);
    try {
        setModel(std::make_shared<ir::Model>(ex->build()), QString::fromStdString(ex->title));
        statusBar()->showMessage(QString::fromStdString(ex->topic), 8000);
    } catch (const std::exception& e) {
        showError(tr("Cannot build example %1").arg(id), QString::fromStdString(e.what()));
    }
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Window-modal and non-blocking: the app stays responsive and tests can find and close it.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName("errorDialog");
    box->open();
    emit errorShown(message);
}

void MainWindow::setModel(std::shared_ptr<const ir::Model> model, const QString& title) {
    model_ = std::move(model);
    shown_ = model_;
    title_ = title;
    layoutCache_.clear();
    while (tabs_->count() > 1) {
        QWidget* w = tabs_->widget(1);
        tabs_->removeTab(1);
        w->deleteLater();
    }
    auto info = onnxio::describeModel(*model_);
    modelInfo_->setPlainText(QString::fromStdString(onnxio::modelInfoToText(info)));
    setWindowTitle(title + " — PassLens");
    tabs_->setTabText(0, QString::fromStdString(model_->graph.name.empty() ? "Graph" : model_->graph.name));
    facts_->setText(factsText(*model_, {}));
    properties_->showNothing();
    // A new model: its own symbolic dims, none pinned yet (applyDims restores its pins after this).
    filePath_.clear();
    dims_.clear();
    symbolicDims_.clear();
    for (const auto& d : eval::unpinnedDims(*model_, {})) symbolicDims_ << QString::fromStdString(d);
    if (dimsEdit_) { dimsEdit_->clear(); updateDimsField(); }
    setReadOnly({}, ir::kNone);
    resetStepper();
    freshModel_ = true;
    startLayout();
}

void MainWindow::setFoldConstants(bool on) {
    if (foldConstants_ == on) return;
    foldConstants_ = on;
    QSettings().setValue("view/foldConstants", on);
    if (!model_) return;
    startLayout();
    if (sideBySide_) showBeforePane();
}

void MainWindow::layoutModel(LatestJob<SnapshotPtr>& job, std::shared_ptr<const ir::Model> m,
                             std::function<void(SnapshotPtr, QString)> done, std::vector<std::string> keepOpen) {
    const auto key = std::make_pair(m.get(), foldConstants_);
    auto store = [this, key, done](SnapshotPtr snap) {
        if (key.first == shown_.get() || layoutCache_.size() < 64) layoutCache_[key] = snap;
        done(snap, {});
    };
    auto fail = [done](const QString& error) { done(nullptr, error); };
    if (auto it = layoutCache_.find(key); it != layoutCache_.end()) {
        SnapshotPtr cached = it->second;
        const auto kept = cached->hierarchy() && !keepOpen.empty() ? expansionOfPaths(*cached->hierarchy(), keepOpen) : std::nullopt;
        if (!kept || *kept == cached->expanded) {
            job.cancel();  // an older request on this channel must not land after the cached drawing
            return done(cached, {});
        }
        return job.request([cached, expanded = *kept](const JobControl& c) { return redrawWith(cached, expanded, c.cancelFlag()); },
                           store, fail);
    }
    layout::DisplayOptions opt;
    opt.foldConstants = foldConstants_;
    opt.opset = m->opsetFor("") ? m->opsetFor("") : 17;
    const ir::Graph* graph = &m->graph;
    job.request([m = std::move(m), graph, opt, keepOpen = std::move(keepOpen)](const JobControl&) {
        return layoutNow(m, graph, opt, keepOpen);
    }, store, fail);
}

void MainWindow::startLayout() {
    progress_->show();
    cancel_->show();
    // Stepping between passes keeps the groups the user opened (by path: each pass's graph has
    // its own hierarchy).
    std::vector<std::string> keepOpen;
    if (SnapshotPtr now = mainView_->snapshot(); now && shownRow_ >= 0 && model_ && now->model) keepOpen = openGroupPaths(now);
    layoutModel(*mainLayout_, shown_, [this](SnapshotPtr snap, QString error) {
        progress_->hide();
        cancel_->hide();
        if (!snap) return showError(tr("Cannot draw the graph"), error);
        showLaidOut(snap);
    }, std::move(keepOpen));
}

bool MainWindow::layoutRunning() const { return mainLayout_->isBusy(); }

void MainWindow::cancelLayout() {
    // A redraw stops between group layouts; one Graphviz call cannot be interrupted, its result
    // is dropped when it lands.
    mainLayout_->cancel();
    progress_->hide();
    cancel_->hide();
    statusBar()->showMessage(tr("Layout cancelled"), 4000);
}

void MainWindow::showLaidOut(const SnapshotPtr& snap) {
    // What the view showed before this drawing replaces it (a step, a run, a redraw).
    const bool fresh = std::exchange(freshModel_, false);
    const GraphViewState before = fresh ? GraphViewState{} : mainView_->viewState();
    const ir::NodeId kept = fresh ? ir::kNone : mainView_->selectedNode();
    updateCaption();  // before the drawing, so the first view leaves room for it
    mainView_->setSnapshot(snap);
    // After the new drawing is in: highlights restored by listeners of snapshotReplaced may carry
    // the previous step's diff colors.
    mainView_->clearNodeStyles();
    applyDiffStyles();
    showGhosts();
    if (!snap->layout.fallbackReason.empty())
        statusBar()->showMessage(tr("Simple layered placement (Graphviz: %1)").arg(QString::fromStdString(snap->layout.fallbackReason)), 10000);
    else if (shownRow_ <= 0)  // a step keeps its own "pass i of n" message
        statusBar()->showMessage(tr("Laid out %1 boxes in %2 s").arg(snap->display.nodes.size()).arg(snap->layoutSeconds, 0, 'f', 2), 5000);
    focusAfterRedraw(before, kept);
    updateBreadcrumb();
    // Find's highlight belongs to one snapshot: a step or another model clears it (the match
    // itself stays selected); a regrouping of the same graph keeps it.
    if (!redrawing_ && snap->model.get() != findModel_) clearFind();
    if (!readOnlyReason_.isEmpty()) {
        statusBar()->showMessage(tr("Read-only: %1. Passes are off for this model.").arg(readOnlyReason_));
        if (readOnlyNode_ != ir::kNone && shownRow_ < 0) mainView_->selectNode(readOnlyNode_);
    }
    emit layoutReady();
    if (shownRow_ >= 0) emit stepShown(shownRow_);
}

GraphView* MainWindow::currentView() const {
    auto* v = qobject_cast<GraphView*>(tabs_->currentWidget());
    return v ? v : mainView_;
}

void MainWindow::onNodeSelected(ir::NodeId id) {
    if (syncing_ && id == ir::kNone) return;  // the before pane chose a node this snapshot lacks
    properties_->showNode(mainView_->snapshot(), id);
    appendProvenance(id);
    syncSelection(mainView_, id);
    // The memory view outlines the buffer of the node's first planned output.
    bool found = false;
    if (SnapshotPtr snap = mainView_->snapshot(); snap && id != ir::kNone && snap->graph->hasNode(id))
        for (ir::ValueId v : snap->graph->node(id).outputs)
            if (v != ir::kNone && (found = memory_->selectValue(v))) break;
    if (!found) memory_->selectValue(ir::kNone);
}

void MainWindow::openSubgraph(ir::NodeId id) {
    auto* src = qobject_cast<GraphView*>(sender());
    if (!src || !src->snapshot()) return;
    SnapshotPtr parent = src->snapshot();
    const ir::Node& n = parent->graph->node(id);
    // The tab title is a path: the parent tab's title, then this node and the body's name.
    const int parentTab = tabs_->indexOf(src == mainView_ ? static_cast<QWidget*>(split_) : src);
    const QString parentPath = parentTab > 0 ? tabs_->tabText(parentTab) : QString();
    const QString nodePath = (parentPath.isEmpty() ? QString() : parentPath + " ▸ ") + QString::fromStdString(shortNodeName(n.displayName()));
    std::vector<std::pair<QString, const ir::Graph*>> bodies;
    for (const auto& a : n.attributes) {
        if (a.g) bodies.push_back({nodePath + "." + QString::fromStdString(a.name), a.g.get()});
        for (const auto& g : a.graphs) bodies.push_back({nodePath + "." + QString::fromStdString(a.name), g.get()});
    }
    // A call of a model-local function (e.g. passlens.fused.Attention) opens its body like a branch.
    if (bodies.empty())
        if (const ir::Function* f = parent->model->findFunction(n.domain, n.opType); f && f->body)
            bodies.push_back({nodePath + " ▸ " + QString::fromStdString(f->domain + "." + f->name), f->body.get()});
    for (const auto& [title, body] : bodies) {
        layout::DisplayOptions opt;
        opt.foldConstants = foldConstants_;
        try {
            // Subgraphs are small next to the main graph; laid out right here.
            SnapshotPtr snap = layoutNow(parent->model, body, opt);
            auto* view = new GraphView(tabs_);
            view->setSnapshot(snap);
            connect(view, &GraphView::nodeSelected, this, [this, view](ir::NodeId nid) { properties_->showNode(view->snapshot(), nid); });
            connect(view, &GraphView::subgraphRequested, this, &MainWindow::openSubgraph);
            const int tab = tabs_->addTab(view, title);
            tabs_->setTabToolTip(tab, title);
            tabs_->setCurrentIndex(tab);
            // A small body reads best at 100% (fitting would blow it up); a large one keeps its first view.
            const auto& b = snap->layout.bounds;
            if (b.width <= view->viewport()->width() && b.height <= view->viewport()->height()) view->showAtScale(1.0);
        } catch (const std::exception& e) {
            showError(tr("Cannot draw subgraph"), QString::fromStdString(e.what()));
        }
    }
}

void MainWindow::find(const QString& text) {
    refreshFindHits(text);
    hitIndex_ = -1;
    if (!hits_.empty()) findNext();
}

void MainWindow::clearFind() {
    const QSignalBlocker block(findEdit_);
    findEdit_->clear();
    hits_.clear();
    hitIndex_ = -1;
    findStatus_->clear();
    mainView_->setSearchHits({});
}

void MainWindow::refreshFindHits(const QString& text) {
    GraphView* v = currentView();
    hits_ = v->findNodes(text);
    v->setSearchHits(hits_);
    findModel_ = v->snapshot() ? v->snapshot()->model.get() : nullptr;
    // Find Next goes on from the selected hit (a step keeps the selection, not the hit's place).
    const auto at = std::find(hits_.begin(), hits_.end(), v->selectedNode());
    hitIndex_ = at == hits_.end() ? -1 : int(at - hits_.begin());
    findStatus_->setText(text.isEmpty() ? QString() : hits_.empty() ? tr("no match") : tr("%1 matches").arg(hits_.size()));
}

void MainWindow::findNext() {
    if (hits_.empty()) return;
    hitIndex_ = (hitIndex_ + 1) % int(hits_.size());
    if (!currentView()->selectNode(hits_[size_t(hitIndex_)])) revealNode(hits_[size_t(hitIndex_)]);
    findStatus_->setText(tr("%1 of %2").arg(hitIndex_ + 1).arg(hits_.size()));
}

void MainWindow::findPrevious() {
    if (hits_.empty()) return;
    hitIndex_ = hitIndex_ <= 0 ? int(hits_.size()) - 1 : hitIndex_ - 1;
    if (!currentView()->selectNode(hits_[size_t(hitIndex_)])) revealNode(hits_[size_t(hitIndex_)]);
    findStatus_->setText(tr("%1 of %2").arg(hitIndex_ + 1).arg(hits_.size()));
}

bool MainWindow::exportImage(const QString& path) {
    GraphView* v = currentView();
    QGraphicsScene* scene = v->scene();
    if (!scene || !v->snapshot()) return false;
    const QRectF src = scene->sceneRect();
    if (path.endsWith(".svg", Qt::CaseInsensitive)) {
        QSvgGenerator gen;
        gen.setFileName(path);
        gen.setSize(src.size().toSize());
        gen.setViewBox(QRectF(QPointF(0, 0), src.size()));
        gen.setTitle(title_);
        QPainter p(&gen);
        if (!p.isActive()) return false;
        scene->render(&p, QRectF(QPointF(0, 0), src.size()), src);
        return p.end();
    }
    // PNG at 2× for print/projector quality, capped so huge graphs stay within memory.
    double scale = std::min(2.0, 16000.0 / std::max(src.width(), src.height()));
    QImage img((src.size() * scale).toSize(), QImage::Format_ARGB32_Premultiplied);
    img.fill(QColor("#fbfbfd"));
    QPainter p(&img);
    p.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene->render(&p, QRectF(QPointF(0, 0), img.size()), src);
    p.end();
    return img.save(path);
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    // Keyboard first: Ctrl+R and the other shortcuts work right after start without a click
    // (without a window manager nothing else gives the window the focus).
    activateWindow();
    if (!docksSized_) {
        docksSized_ = true;
        if (!restoredState_) QTimer::singleShot(0, this, &MainWindow::sizeDocks);  // once the dock layout exists
    }
}

// ---- analysis docks ------------------------------------------------------------------------------

void MainWindow::buildAnalysisDocks() {
    analysisHighlight_ = new GraphHighlighter(mainView_, this);

    domTree_ = new DominatorTreeView(this);
    auto* domDock = new QDockWidget(tr("Dominator Tree"), this);
    domDock->setObjectName("dominatorTree");
    domDock->setWidget(domTree_);
    // Join a tab group of docks already at the bottom (if any) rather than squeezing in beside them:
    // side by side, their minimum widths add up and could widen the window past the screen.
    QDockWidget* bottomNeighbour = nullptr;
    for (QDockWidget* d : findChildren<QDockWidget*>())
        if (dockWidgetArea(d) == Qt::BottomDockWidgetArea && !d->isFloating()) bottomNeighbour = d;
    addDockWidget(Qt::BottomDockWidgetArea, domDock);
    if (bottomNeighbour) {
        tabifyDockWidget(bottomNeighbour, domDock);
        bottomNeighbour->raise();
    } else {
        resizeDocks({domDock}, {320}, Qt::Vertical);  // a saved window state, restored later, wins
    }
    // Selection linked both ways by NodeId; each side ignores its own echo.
    connect(mainView_, &GraphView::nodeSelected, domTree_, &DominatorTreeView::selectNode);
    connect(domTree_, &DominatorTreeView::nodeSelected, mainView_, &GraphView::selectNode);
    connect(domTree_, &DominatorTreeView::pathChanged, this,
            [this](ir::NodeId node, ir::NodeId dominator, const std::vector<ir::NodeId>& path, bool post) {
                if (node == ir::kNone) return analysisHighlight_->clear();
                std::map<ir::NodeId, NodeStyle> styles;
                for (ir::NodeId n : path) {
                    NodeStyle style = highlightStyle(QColor("#ede9fe"), QColor("#7c3aed"));
                    // On a pass step the path keeps its diff ring and badge: fill and border say "path".
                    if (DiffState d = shownDiff_.stateOf(n); d != DiffState::Unchanged) {
                        const NodeStyle diff = styleFor(d);
                        style.outline = diff.outline;
                        style.hatched = diff.hatched;
                        style.badge = diff.badge;
                    }
                    styles[n] = style;
                }
                if (dominator != ir::kNone) styles[dominator].badge = post ? tr("ipdom") : tr("idom");
                analysisHighlight_->show(styles);
            });
    connect(mainView_, &GraphView::snapshotReplaced, this, &MainWindow::onAnalysisSnapshot);

    whyNot_ = new WhyNotFusedPanel(this);
    whyNotDock_ = new QDockWidget(tr("Why Not Fused?"), this);
    whyNotDock_->setObjectName("whyNotFused");
    whyNotDock_->setWidget(whyNot_);
    addDockWidget(Qt::RightDockWidgetArea, whyNotDock_);
    // Beside the properties (the tall dock): an explanation needs room for its list.
    if (auto* propDock = findChild<QDockWidget*>("properties")) tabifyDockWidget(propDock, whyNotDock_);
    if (auto* propDock = findChild<QDockWidget*>("properties")) propDock->raise();
    auto addWhyNotFused = [this](ir::NodeId id, QMenu* menu) {
        menu->addSeparator();
        menu->addAction(tr("Why Not Fused?"), this, [this, id] { showWhyNotFused(id); })->setObjectName("whyNotFused");
    };
    connect(mainView_, &GraphView::nodeContextMenuRequested, this, addWhyNotFused);
    // While the panel is on screen it answers for the selected node: never the previous one's answer.
    connect(mainView_, &GraphView::nodeSelected, this, [this](ir::NodeId id) {
        if (whyNot_->isVisible()) explainWhyNotFused(id);
    });
    connect(whyNotDock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        const ir::NodeId sel = mainView_->selectedNode();
        const bool stale = !whyNot_->explanation() || whyNot_->explanation()->node != sel;
        if (visible && stale && !whyNot_->busy()) explainWhyNotFused(sel);
    });
    connect(domTree_->treeView(), &GraphView::nodeContextMenuRequested, this, addWhyNotFused);
    // The blocker of the chosen refusal: the explained node amber, the blocking node and edge red.
    connect(whyNot_, &WhyNotFusedPanel::blockerChanged, this,
            [this](ir::NodeId node, const std::vector<ir::NodeId>& involved, ir::NodeId blocking,
                   const std::vector<std::pair<ir::NodeId, ir::NodeId>>& edges) {
                std::map<ir::NodeId, NodeStyle> styles;
                for (ir::NodeId n : involved) styles[n] = highlightStyle(QColor("#fef3c7"), QColor("#d97706"));
                styles[node] = highlightStyle(QColor("#fef3c7"), QColor("#d97706"), tr("why?"));
                if (blocking != ir::kNone)
                    styles[blocking] = highlightStyle(QColor("#fee2e2"), QColor("#dc2626"), tr("blocks"));
                analysisHighlight_->show(styles, edges, EdgeStyle{QColor("#dc2626"), 3.2, false});
            });

    clustersAction_ = new QAction(tr("Fusion &Groups"), this);
    clustersAction_->setObjectName("fusionGroupsAction");
    clustersAction_->setCheckable(true);
    // Off by default: even one group's frame covers edge labels; on, it outlines the selected node's group.
    clustersAction_->setChecked(QSettings().value("view/fusionGroups", false).toBool());
    clustersAction_->setToolTip(tr("Outline the selected node's fusion group (TVM FuseOps); the anchor is tagged"));
    connect(clustersAction_, &QAction::toggled, this, &MainWindow::setFusionClustersVisible);
    mainView_->setClustersVisible(clustersAction_->isChecked());

    QMenu* view = nullptr;
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&View")) view = a->menu();
    if (view) {
        view->addSeparator();
        view->addAction(clustersAction_);
    }
}

void MainWindow::onAnalysisSnapshot() {
    SnapshotPtr snap = mainView_->snapshot();
    // Opening or closing a group redraws the same graph: its tree and fusion groups stand.
    const bool sameGraph = snap && lastClusters_.graph && lastClusters_.graph->graph == snap->graph &&
                           lastClusters_.graph->model == snap->model;
    if (sameGraph) {
        mainView_->setClusters(lastClusters_.clusters);
        emit fusionClustersReady(mainView_->clusterOverlayCount());
        return;
    }
    domTree_->setGraph(snap);
    whyNot_->clear();
    if (!snap) return;
    // Fusion groups off the GUI thread; the result is dropped if another drawing replaced this one.
    clusterJob_->request([snap](const JobControl&) {
        FusionClusters out{snap, {}};
        try {
            const auto plan = analysis::computeFusionGroups(*snap->graph);
            for (const auto& grp : plan.groups) {
                if (grp.members.size() < 2) continue;
                NodeCluster c;
                c.label = QObject::tr("#%1 · %2 ops · %3")
                              .arg(grp.id).arg(grp.members.size())
                              .arg(QString::fromStdString(std::string(analysis::patternName(grp.pattern))));
                c.members = grp.members;
                c.anchor = grp.anchor;
                out.clusters.push_back(std::move(c));
            }
        } catch (const std::exception&) {
            // A graph the fuser cannot take (a cycle) simply shows no clusters.
        }
        return out;
    }, [this](FusionClusters r) { onFusionGroupsFinished(std::move(r)); });
}

void MainWindow::onFusionGroupsFinished(FusionClusters r) {
    SnapshotPtr shown = mainView_->snapshot();
    if (!shown || !r.graph || r.graph->graph != shown->graph || r.graph->model != shown->model) return;
    lastClusters_ = r;
    mainView_->setClusters(std::move(r.clusters));
    emit fusionClustersReady(mainView_->clusterOverlayCount());
}

bool MainWindow::analysesRunning() const {
    return memory_->isPlanning() || domTree_->busy() || clusterJob_->isBusy();
}

void MainWindow::setFusionClustersVisible(bool on) {
    QSettings().setValue("view/fusionGroups", on);
    mainView_->setClustersVisible(on);
    if (clustersAction_->isChecked() != on) clustersAction_->setChecked(on);
}

void MainWindow::showWhyNotFused(ir::NodeId id) {
    whyNotDock_->show();
    whyNotDock_->raise();
    explainWhyNotFused(id);
}

void MainWindow::explainWhyNotFused(ir::NodeId id) {
    if (id == ir::kNone) return whyNot_->clear();
    // The shown snapshot belongs to the stepper's run: explain with that run's fusion remarks
    // instead of running the passes again (a run without fusion passes has none to offer).
    std::shared_ptr<const analysis::FusionRemarks> remarks;
    const SnapshotPtr shot = mainView_->snapshot();
    const PipelineRunPtr run = stepper_->lastRun();
    if (run && run->result && shot && shot->model && modelForRow(shownRow_) == shot->model) {
        if (runRemarksOf_ != run->result) {
            runRemarksOf_ = run->result;
            auto fromRun = std::make_shared<analysis::FusionRemarks>(analysis::fusionRemarksOf(*run->result));
            addOrtRemarks(*run->result, *fromRun);
            runRemarks_ = fromRun->fusionPasses > 0 ? fromRun : nullptr;
        }
        remarks = runRemarks_;
    }
    whyNot_->explain(shot, id, remarks);
}

void MainWindow::addOrtRemarks(const passes::PipelineResult& run, analysis::FusionRemarks& out) {
    // The onnxruntime profile's transformers (ort-*) are fusions too: their remarks (e.g.
    // AttentionFusion's failed condition) answer "why not fused?" for the nodes they name.
    for (const auto& step : run.steps) {
        if (step.result.name.rfind("ort-", 0) != 0) continue;
        ++out.fusionPasses;
        for (const auto& r : step.result.remarks)
            if (r.graphPath.empty() && !r.nodes.empty()) out.entries.push_back({step.result.name, r});
    }
}

void MainWindow::closeEvent(QCloseEvent* e) {
    QSettings s;
    s.setValue("window/geometry", saveGeometry());
    s.setValue("window/state", saveState(kWindowStateVersion));
    QMainWindow::closeEvent(e);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) openFile(urls.front().toLocalFile());
}

}  // namespace passlens::ui
