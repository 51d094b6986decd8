#pragma once
// The application window: a tabbed graph view (main graph, opened subgraphs), docks for node
// properties and model facts, find bar, recent files, export, settings kept with QSettings.
// The pass stepper, change log, remarks and memory docks live in MainWindowStepper.cpp.
#include <QMainWindow>
#include <QStringList>
#include <functional>
#include <map>
#include <memory>

#include "graph/GraphSnapshot.h"
#include "ir/Model.h"
#include "stepper/DiffStyle.h"

class QFontMetrics;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QSplitter;
class QTabWidget;
class QTextBrowser;
class QToolBar;
class QToolButton;
// analysis docks (buildAnalysisDocks)
class QDockWidget;
namespace passlens::ui {
class DominatorTreeView;
class GraphHighlighter;
class WhyNotFusedPanel;
template <class T> class LatestJob;
}
namespace passlens::analysis { struct FusionRemarks; }
namespace passlens::passes { struct PipelineResult; }

namespace passlens::ui {

class ChangeLogPanel;
class CompareView;
class GraphView;
struct GraphViewState;
class MemoryView;
class PropertiesPanel;
class RemarksPanel;
class StepperPanel;

/// "graph ▸ … ▸ layer.3 ▸ attention ▸ MatMul": `path` joined with " ▸ ", or, when that is wider
/// than `maxWidth`, the first segment, an ellipsis and as many of the last segments as fit (the
/// last one always). Used for the status bar's breadcrumb.
QString elidePathMiddle(const QStringList& path, const QFontMetrics& metrics, int maxWidth);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    /// Version of the saved dock layout (QMainWindow::saveState): raise it whenever docks are
    /// added, removed or renamed, so a saved layout from an older build is not restored.
    static constexpr int kWindowStateVersion = 2;
    /// Whether the constructor restored a saved dock layout (false on first start or after a
    /// version change).
    bool restoredWindowState() const { return restoredState_; }

    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // ---- analysis docks (issue 9 part B: dominator tree, fusion clusters, "why not fused?"),
    // ---- all built by buildAnalysisDocks() in MainWindow.cpp ----------------------------------
    DominatorTreeView* dominatorTreeView() const { return domTree_; }
    GraphHighlighter* analysisHighlight() const { return analysisHighlight_; }
    WhyNotFusedPanel* whyNotFusedPanel() const { return whyNot_; }
    /// Opens the "Why not fused?" dock for a node of the main graph (also the context-menu action).
    void showWhyNotFused(ir::NodeId id);
    void setFusionClustersVisible(bool on);
    /// True while a dock's analysis of the shown graph (memory plan, dominator tree, fusion
    /// groups) runs in the pool.
    bool analysesRunning() const;
signals:
    void fusionClustersReady(int clusters);   ///< fusion groups of the shown graph are drawn
private:
    struct FusionClusters { SnapshotPtr graph; std::vector<NodeCluster> clusters; };
    void buildAnalysisDocks();
    void explainWhyNotFused(ir::NodeId id);  ///< the panel's answer for `id`, without raising it
    /// Appends the remarks of the run's onnxruntime transformers (ort-*), which core's fusion
    /// remarks (passes ordered as fusions) do not include.
    static void addOrtRemarks(const passes::PipelineResult& run, analysis::FusionRemarks& out);
    void onAnalysisSnapshot();
    void onFusionGroupsFinished(FusionClusters r);
    DominatorTreeView* domTree_ = nullptr;
    GraphHighlighter* analysisHighlight_ = nullptr;
    WhyNotFusedPanel* whyNot_ = nullptr;
    // "Why not fused?" reads the stepper's run: its fusion remarks, read once per run.
    std::shared_ptr<const analysis::FusionRemarks> runRemarks_;
    std::shared_ptr<const passes::PipelineResult> runRemarksOf_;
    QDockWidget* whyNotDock_ = nullptr;
    QAction* clustersAction_ = nullptr;
    std::unique_ptr<LatestJob<FusionClusters>> clusterJob_;
    FusionClusters lastClusters_;   ///< of the shown graph, kept across redraws of other groups
    // ---- end of the analysis docks block ------------------------------------------------------
public:

    /// Loads a model file; on failure shows an error dialog (window-modal, non-blocking) and keeps
    /// the current model. A file that is well formed but uses an op, opset or domain this build
    /// does not know opens read-only: drawn, the named node selected, passes off, the reason in
    /// the status bar.
    bool openFile(const QString& path);
    /// Why the shown model is read-only; empty when it is not.
    QString readOnlyReason() const { return readOnlyReason_; }
    /// Shows an in-memory model (examples) under a display name.
    void setModel(std::shared_ptr<const ir::Model> model, const QString& title);
    void openExample(const QString& id);
    std::shared_ptr<const ir::Model> model() const { return model_; }
    /// The model drawn in the graph view: the loaded model or the pipeline snapshot chosen in the
    /// stepper. Docks that follow the graph (memory, analysis views) use this one.
    std::shared_ptr<const ir::Model> shownModel() const { return shown_; }

    GraphView* graphView() const { return mainView_; }
    PropertiesPanel* propertiesPanel() const { return properties_; }
    bool layoutRunning() const;
    void setFoldConstants(bool on);
    bool foldConstants() const { return foldConstants_; }

    /// Find bar actions (also bound to Ctrl+F, Enter/F3, Shift+Enter/Shift+F3).
    void find(const QString& text);
    void findNext();
    void findPrevious();

    /// Passes ▸ Next Change (F8) / Previous Change (Shift+F8): selects the next added or changed
    /// node of the shown step in reading order, or centers the next removed one's ghost
    /// (MainWindowFocus.cpp). `step` is +1 or -1.
    void showNextChange(int step = 1);

    bool exportImage(const QString& path);  ///< .png or .svg of the current view's whole drawing

    /// File → Compare With…: a new tab with the open model (A) and `pathB` side by side, diffed
    /// (MainWindowCompare.cpp). Null when no model is open.
    CompareView* compareWith(const QString& pathB);
    // ---- large graphs: groups of the hierarchy (collapsed = one box) ---------------------------
    /// Opens or closes a group of the main view's drawing (re-laid out off the GUI thread; only
    /// the groups whose content changed are laid out again).
    void setGroupExpanded(uint32_t group, bool expand);
    /// Opens exactly these groups (and the root).
    void showExpansion(layout::Expansion expanded, ir::NodeId select = ir::kNone);
    void expandAllGroups();
    void collapseToLevel(int level);
    /// Seconds the shown model's file took to import (0 for examples).
    double importSeconds() const { return importSeconds_; }
signals:
    void expansionShown();                    ///< a redraw with other groups open is in the view
public:

    // ---- pass stepper (MainWindowStepper.cpp) ------------------------------------------------
    StepperPanel* stepper() const { return stepper_; }
    ChangeLogPanel* changeLog() const { return changeLog_; }
    RemarksPanel* remarks() const { return remarks_; }
    MemoryView* memoryView() const { return memory_; }
    GraphView* beforeView() const { return beforeView_; }
    /// Row of the stepper shown in the graph view (0 = input model), -1 when no run is shown.
    int shownStep() const { return shownRow_; }
    /// Diff of the shown step against the previous snapshot (empty for row 0 / no run).
    const StepDiff& shownDiff() const { return shownDiff_; }
    /// The shown step's model-level changes (opsets, functions, IR version) in one line; empty if none.
    const QString& shownModelDiff() const { return shownModelDiff_; }
    /// Before | after panes: removed nodes are red in the before pane (in the single view they
    /// stand as ghost items where they were, which operatorItemCount() does not count).
    void setSideBySide(bool on);
    bool sideBySide() const { return sideBySide_; }
    /// Text of the status-bar notice about non-standard domains ("" when the model is standard).
    QString domainNotice() const;
    bool exportPassReport(const QString& path);      ///< JSON of the last run (core/passes/Report)
    bool exportOptimizedModel(const QString& path);  ///< the last run's final snapshot as ONNX
    /// The memory charts as `<base>-lifetime/arena/live.(png|svg)`; the extension of `path` picks.
    bool exportMemoryCharts(const QString& path);

signals:
    void layoutReady();                       ///< the current model's drawing is in the view
    void errorShown(const QString& message);  ///< an error dialog was opened
    void stepShown(int row);                  ///< a stepper row is drawn with its diff
    void ghostsShown(int count);              ///< removed nodes of the shown step drawn as ghosts

protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void buildMenus();
    void buildCompareAction(QMenu* file);
    void buildDocks();
    void startLayout();
    void showLaidOut(const SnapshotPtr& snap);
    void cancelLayout();
    void showError(const QString& title, const QString& message);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void openSubgraph(ir::NodeId id);
    void onNodeSelected(ir::NodeId id);
    GraphView* currentView() const;
    /// Lays out `m` (cached per model and fold setting) off the GUI thread; `done` runs on the GUI
    /// thread with the drawing, or with null and an error message.
    /// `keepOpen`: group paths to open (see layoutNow in graph/LayoutJob.h); a cached drawing
    /// with other groups open is redrawn with them.
    /// `job` is the caller's channel: a newer request on it drops an older one's drawing.
    void layoutModel(LatestJob<SnapshotPtr>& job, std::shared_ptr<const ir::Model> m,
                     std::function<void(SnapshotPtr, QString)> done, std::vector<std::string> keepOpen = {});

    // pass stepper (MainWindowStepper.cpp)
    void buildStepperDocks();
    void sizeDocks();  ///< the first start's dock layout (a saved window state overrides it)
    void openBottomDocksAfterRun();
    bool bottomClosedAtStart_ = false;
    void buildPanelsMenu();  ///< View ▸ Panels: every dock, shown or not
    void buildStepperMenu(QMenu* menu);
    void resetStepper();
    void showStep(int row);
    void applyDiffStyles();
    void showGhosts();
    std::shared_ptr<const ir::Model> modelForRow(int row) const;  ///< 0 = the loaded model
    void updateCaption();
    void showBeforePane();
    void selectNodes(const std::vector<ir::NodeId>& nodes);
    void syncSelection(GraphView* from, ir::NodeId id);
    void appendProvenance(ir::NodeId id);
    void updateDomainNotice();
    /// Plans `m` in the Memory dock now, or (a large model, the dock hidden) once it is shown.
    void showMemoryOf(std::shared_ptr<const ir::Model> m, const QString& title);
    /// Models above this many nodes plan their memory only once the Memory dock is shown.
    static constexpr size_t kDeferredDockNodes = 1500;
    std::pair<std::shared_ptr<const ir::Model>, QString> pendingMemory_;

    void setReadOnly(const QString& reason, ir::NodeId node);
    /// The status bar's facts of `m` ("282 nodes · 23,867 parameters · opset 17"), after
    /// "`snapshot`: " when it names one.
    QString factsText(const ir::Model& m, const QString& snapshot) const;
public:
    QString factsLine() const;  ///< the status bar's facts as shown
private:

    // the dims field (MainWindowDims.cpp)
public:
    /// Pins the symbolic input dims ("batch=8, seq=128"; empty: none) by re-importing the file;
    /// false (with a dialog naming the problem) for bad text or a name no input has.
    bool applyDims(const QString& text);
    QString dims() const { return dims_; }
    /// The symbolic input dims of the file as opened (empty: the dims field is hidden).
    QStringList symbolicDims() const { return symbolicDims_; }
private:
    void buildDimsField(QToolBar* bar);
    void updateDimsField();
    QString filePath_;              ///< the opened file (empty for examples)
    QString dims_;
    QStringList symbolicDims_;
    QLineEdit* dimsEdit_ = nullptr;
    std::vector<QAction*> dimsActions_;

    std::shared_ptr<const ir::Model> model_;
    std::shared_ptr<const ir::Model> shown_;
    QString readOnlyReason_;                 ///< set while a model with unknown ops is shown
    ir::NodeId readOnlyNode_ = ir::kNone;    ///< the node the import error named
    QAction* runAction_ = nullptr;
    QString title_;
    bool foldConstants_ = true;
    GraphView* mainView_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    PropertiesPanel* properties_ = nullptr;
    QTextBrowser* modelInfo_ = nullptr;
    QLabel* facts_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancel_ = nullptr;
    QLineEdit* findEdit_ = nullptr;
    QLabel* findStatus_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    /// The main view's drawing (layouts and group redraws): the newest request wins.
    std::unique_ptr<LatestJob<SnapshotPtr>> mainLayout_;
    std::unique_ptr<LatestJob<SnapshotPtr>> ghostLayout_;   ///< the step before, for ghosts
    std::unique_ptr<LatestJob<SnapshotPtr>> beforeLayout_;  ///< the before pane
    std::map<std::pair<const ir::Model*, bool>, SnapshotPtr> layoutCache_;  ///< by model and fold
    std::vector<ir::NodeId> hits_;
    int hitIndex_ = -1;

    // pass stepper
    QSplitter* split_ = nullptr;
    GraphView* beforeView_ = nullptr;
    StepperPanel* stepper_ = nullptr;
    ChangeLogPanel* changeLog_ = nullptr;
    RemarksPanel* remarks_ = nullptr;
    MemoryView* memory_ = nullptr;
    QLabel* domainNotice_ = nullptr;
    bool sideBySide_ = false;
    bool docksSized_ = false;
    bool restoredState_ = false;
    bool syncing_ = false;
    int shownRow_ = -1;
    StepDiff shownDiff_;
    QString shownModelDiff_;

    // where the view looks after a redraw (MainWindowFocus.cpp)
    /// A step, a run or a redraw of the same graph: the kept selection centered at the zoom the
    /// user had, else the step's first change brought into view, else the previous view when it
    /// still shows boxes, else the first view. A newly opened model keeps its first view.
    void focusAfterRedraw(const GraphViewState& before, ir::NodeId kept);
    /// Ghosts drawn after the focus was chosen: a step that only removed nodes shows its first.
    void focusOnLateGhosts();
    /// Hits of `text` on the drawing shown now, keeping the selection (no jump to the first hit).
    void refreshFindHits(const QString& text);
    void clearFind();
    const ir::Model* findModel_ = nullptr;  ///< the snapshot find's hits belong to
    bool freshModel_ = false;              ///< the next drawing is a new model's first view
    ir::NodeId lastChangeSpot_ = ir::kNone;  ///< where Next Change stood (a ghost is not selectable)

    // large graphs
    void buildGroupMenu(QMenu* view);
    void revealNode(ir::NodeId id);  ///< opens the groups around a node, then selects it
    void markChangedGroups();        ///< "3 changed" on collapsed groups holding the shown step's changes
    void updateBreadcrumb();
    QLabel* breadcrumb_ = nullptr;
    double importSeconds_ = 0;
    bool redrawing_ = false;      ///< showLaidOut of a redraw: keep the find position
};

}  // namespace passlens::ui
