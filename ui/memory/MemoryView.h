#pragma once
// The Memory view of one graph snapshot: a planner (and optionally a second planner to compare
// side by side), the totals (static / dynamic / naive / lower bound / arena), the lifetime chart,
// the arena chart (buffer-sharing timeline) and the live-bytes curve per planner, and a buffer
// table. Planning runs on a worker thread; the result arrives as an immutable PlanSnapshot.
#include <QWidget>
#include <memory>
#include <vector>

#include "LatestJob.h"

#include "ir/Graph.h"
#include "ir/Model.h"
#include "memory/MemoryPlan.h"

class QComboBox;
class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QTabWidget;

namespace passlens::ui {

class BufferTableModel;
class MemoryChartWidget;
class SchedulesPanel;
class TrainingMemoryPanel;

/// One finished planning run. Immutable once made; shared by the charts and the table.
struct PlanSnapshot {
    QString modelTitle;
    std::shared_ptr<const memory::MemoryPlan> primary;
    std::shared_ptr<const memory::MemoryPlan> compare;  ///< null when not comparing
    QString error;                                      ///< non-empty when planning failed
    /// Symbolic input dims nobody set, planned at 1 as `passlens-cli memplan` does ("batch=1").
    QStringList assumedDims;
};

/// Runs the planners for a graph (any thread). Never throws: errors land in PlanSnapshot::error.
/// `schedule` by name: "model", "memory" (the memory-aware order) or a core/schedule scheduler ("best", "search", ...).
PlanSnapshot planSnapshot(const ir::Model& model, const ir::Graph& graph, const QString& primary,
                          const QString& compare, const QString& schedule);

class MemoryView : public QWidget {
    Q_OBJECT
public:
    explicit MemoryView(QWidget* parent = nullptr);
    ~MemoryView() override;

    /// Plans `snapshotGraph` (which must stay valid while `model` lives; for the main graph pass
    /// &model->graph). A null model clears the view.
    void setGraph(std::shared_ptr<const ir::Model> model, const ir::Graph* snapshotGraph, const QString& title = {});
    /// Planner names from memory::plannerNames(); `compare` empty = no comparison. Replans.
    void setPlanners(const QString& primary, const QString& compare);
    /// Shows a finished run (called on the GUI thread when the worker is done).
    void setData(const PlanSnapshot& snapshot);

    const PlanSnapshot& snapshot() const { return snapshot_; }
    bool isPlanning() const;
    /// Drops the running job's result (the planners cannot be interrupted midway).
    void cancelPlanning();

    MemoryChartWidget* lifetimeChart() const { return lifetime_; }
    MemoryChartWidget* arenaChart(int side) const { return arena_[side]; }
    MemoryChartWidget* liveBytesChart(int side) const { return live_[side]; }
    BufferTableModel* bufferModel() const { return buffers_; }
    /// The Training tab (phases, saved-for-backward, recomputation strategies) of training graphs.
    TrainingMemoryPanel* trainingPanel() const { return training_; }
    /// The Schedules tab: exporter order against the best schedule, for the main graph.
    SchedulesPanel* schedulesPanel() const { return schedules_; }
    QString totalsText() const;
    /// Outlines `value`'s buffer in every chart (the graph's selection); false when not planned.
    bool selectValue(ir::ValueId value);

signals:
    void planReady();
    void planFailed(const QString& message);
    /// A buffer was clicked: its value, and its producer and consumers for the graph view.
    void valueClicked(passlens::ir::ValueId value);
    void nodesRequested(const std::vector<passlens::ir::NodeId>& nodes);

private:
    void replan();
    void onValueClicked(ir::ValueId v);
    void updateLayoutForComparison(bool comparing);
    /// Places the charts for the view's shape (see MemoryView.cpp); `wide`: side by side.
    void arrangeCharts(bool wide);
    void resizeEvent(QResizeEvent* e) override;
    QGridLayout* chartGrid_ = nullptr;
    bool wideCharts_ = false;

    std::shared_ptr<const ir::Model> model_;
    const ir::Graph* graph_ = nullptr;
    QString title_;
    PlanSnapshot snapshot_;
    LatestJob<PlanSnapshot> planJob_;

    QComboBox* plannerBox_ = nullptr;
    QComboBox* compareBox_ = nullptr;
    QComboBox* scheduleBox_ = nullptr;
    QProgressBar* busy_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* totals_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    MemoryChartWidget* lifetime_ = nullptr;
    MemoryChartWidget* arena_[2] = {nullptr, nullptr};
    MemoryChartWidget* live_[2] = {nullptr, nullptr};
    BufferTableModel* buffers_ = nullptr;
    QTableView* table_ = nullptr;
    SchedulesPanel* schedules_ = nullptr;
    int schedulesTab_ = -1;
    TrainingMemoryPanel* training_ = nullptr;
    int trainingTab_ = -1;
};

}  // namespace passlens::ui
