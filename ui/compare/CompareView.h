#pragma once
// File → Compare With…: model A (the open model) and model B side by side, as the pass stepper's
// before | after panes, with the structural diff of core/diff: changed nodes yellow, nodes only in
// A red, only in B green; selecting a node selects its counterpart; a list of differences centers
// both views on click. Loading B, diffing and both layouts run off the GUI thread (progress, cancel).
#include <QWidget>
#include <functional>
#include <memory>

#include "LatestJob.h"
#include "diff/ModelDiff.h"
#include "graph/GraphSnapshot.h"

class QLabel;
class QProgressBar;
class QTableView;
class QToolButton;

namespace passlens::ui {

class DifferenceModel;
class GraphView;

class CompareView : public QWidget {
    Q_OBJECT
public:
    explicit CompareView(QWidget* parent = nullptr);
    ~CompareView() override;

    /// Loads `pathB` and compares `a` with it (asynchronous: ready() or failed()).
    void compareWithFile(std::shared_ptr<const ir::Model> a, const QString& titleA, const QString& pathB);
    /// Compares two models already in memory (asynchronous as well).
    void compareModels(std::shared_ptr<const ir::Model> a, std::shared_ptr<const ir::Model> b, const QString& titleA,
                       const QString& titleB);
    void cancel();
    bool isBusy() const { return busy_; }

    std::shared_ptr<const diff::ModelComparison> comparison() const { return cmp_; }
    GraphView* viewA() const { return viewA_; }
    GraphView* viewB() const { return viewB_; }
    QTableView* differenceList() const { return list_; }
    DifferenceModel* differenceModel() const { return model_; }
    QString summaryText() const;

    /// Selects and centers the row's node(s) in both views (what a click on the list does).
    void activateDifference(int row);
    /// The box that shows node `id` of one side: the node, or for a Constant folded into its
    /// readers (the default drawing) its first drawn reader; kNone when nothing shows it.
    ir::NodeId drawnNode(bool sideA, ir::NodeId id) const;
    /// Match reason, score and changes of a main-graph node, as HTML for the Properties dock.
    QString matchHtml(bool sideA, ir::NodeId id) const;

signals:
    void ready();                        ///< diff done and both sides drawn
    void failed(const QString& message); ///< B could not be loaded or drawn
    /// A node was selected in one of the views (for the Properties dock).
    void nodeChosen(SnapshotPtr snapshot, ir::NodeId id, const QString& matchHtml);

private:
    struct DiffJob {
        std::shared_ptr<const ir::Model> b;
        std::shared_ptr<const diff::ModelComparison> cmp;
        QString error;
    };
    void start(std::function<DiffJob()> job, std::shared_ptr<const ir::Model> a, const QString& titleA, const QString& titleB);
    void onDiffFinished(DiffJob job);
    void layoutSide(bool sideA);
    void onSideDrawn(bool sideA, SnapshotPtr snap);
    void applyStyles();
    void onNodeSelected(bool sideA, ir::NodeId id);
    void setBusy(bool busy, const QString& text = {});

    std::shared_ptr<const ir::Model> a_, b_;
    std::shared_ptr<const diff::ModelComparison> cmp_;
    QString titleA_, titleB_;
    int pendingLayouts_ = 0;
    bool busy_ = false;
    bool syncing_ = false;
    LatestJob<DiffJob> diffJob_;
    LatestJob<SnapshotPtr> layoutJobs_[2];  ///< side A, side B
    GraphView* viewA_ = nullptr;
    GraphView* viewB_ = nullptr;
    QTableView* list_ = nullptr;
    DifferenceModel* model_ = nullptr;
    QLabel* summary_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QToolButton* cancel_ = nullptr;
};

}  // namespace passlens::ui
