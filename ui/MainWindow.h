#pragma once
// The application window: a tabbed graph view (main graph, opened subgraphs), docks for node
// properties and model facts, find bar, recent files, export, settings kept with QSettings.
#include <QFutureWatcher>
#include <QMainWindow>
#include <memory>

#include "graph/GraphSnapshot.h"
#include "ir/Model.h"

class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QTabWidget;
class QTextBrowser;
class QToolButton;
// analysis docks (buildAnalysisDocks)
class QDockWidget;
template <typename T> class QFutureWatcher;
namespace passlens::ui { class DominatorTreeView; class GraphHighlighter; class WhyNotFusedPanel; }

namespace passlens::ui {

class GraphView;
class PropertiesPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
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
signals:
    void fusionClustersReady(int clusters);   ///< fusion groups of the shown graph are drawn
private:
    struct FusionClusters { SnapshotPtr graph; std::vector<NodeCluster> clusters; };
    void buildAnalysisDocks();
    void onAnalysisSnapshot();
    void onFusionGroupsFinished();
    DominatorTreeView* domTree_ = nullptr;
    GraphHighlighter* analysisHighlight_ = nullptr;
    WhyNotFusedPanel* whyNot_ = nullptr;
    QDockWidget* whyNotDock_ = nullptr;
    QAction* clustersAction_ = nullptr;
    QFutureWatcher<FusionClusters>* clusterWatcher_ = nullptr;
    // ---- end of the analysis docks block ------------------------------------------------------
public:

    /// Loads a model file; on failure shows an error dialog (window-modal, non-blocking) and keeps
    /// the current model.
    bool openFile(const QString& path);
    /// Shows an in-memory model (examples) under a display name.
    void setModel(std::shared_ptr<const ir::Model> model, const QString& title);
    void openExample(const QString& id);
    std::shared_ptr<const ir::Model> model() const { return model_; }

    GraphView* graphView() const { return mainView_; }
    PropertiesPanel* propertiesPanel() const { return properties_; }
    bool layoutRunning() const;
    void setFoldConstants(bool on);
    bool foldConstants() const { return foldConstants_; }

    /// Find bar actions (also bound to Ctrl+F, Enter/F3, Shift+Enter/Shift+F3).
    void find(const QString& text);
    void findNext();
    void findPrevious();

    bool exportImage(const QString& path);  ///< .png or .svg of the current view's whole drawing

signals:
    void layoutReady();                       ///< the current model's drawing is in the view
    void errorShown(const QString& message);  ///< an error dialog was opened

protected:
    void closeEvent(QCloseEvent* e) override;
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void buildMenus();
    void buildDocks();
    void startLayout();
    void onLayoutFinished();
    void cancelLayout();
    void showError(const QString& title, const QString& message);
    void addRecent(const QString& path);
    void rebuildRecentMenu();
    void openSubgraph(ir::NodeId id);
    void onNodeSelected(ir::NodeId id);
    GraphView* currentView() const;

    std::shared_ptr<const ir::Model> model_;
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
    QFutureWatcher<SnapshotPtr> watcher_;
    uint64_t generation_ = 0;        ///< bumps on every request; stale results are dropped
    uint64_t watchedGeneration_ = 0;
    std::vector<ir::NodeId> hits_;
    int hitIndex_ = -1;
};

}  // namespace passlens::ui
