#pragma once
// The memory dock's Training tab: the training graph's plan on one time axis (TrainingTimeline),
// a recomputation strategy switch (none / sqrt / budget slider) that replans on a worker thread,
// the peak against the recompute FLOPs, and the trade-off chart over budgets.
#include <QWidget>
#include <memory>

#include "LatestJob.h"

#include "autodiff/Recompute.h"
#include "autodiff/TrainingMemory.h"
#include "ir/Model.h"
#include "memory/TrainingCharts.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QTimer;

namespace passlens::ui {

/// One finished replanning (any thread makes it; immutable after).
struct TrainingPlanResult {
    autodiff::RecomputeOptions options;
    std::shared_ptr<const memory::MemoryPlan> plan;
    std::shared_ptr<const autodiff::TrainingMemory> training;
    autodiff::RecomputeResult recompute;
    std::vector<TradeoffPoint> tradeoff;  ///< filled when asked (first plan of a model)
    int64_t lowestPeak = 0;               ///< with every allowed activation recomputed
    QString error;
};

/// Applies `options` to a copy of `base` and plans it; with `tradeoff`, also none/sqrt/all and a
/// few budgets for the chart. Never throws.
TrainingPlanResult planTrainingStrategy(const ir::Model& base, const autodiff::RecomputeOptions& options, bool tradeoff);

class TrainingMemoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit TrainingMemoryPanel(QWidget* parent = nullptr);
    ~TrainingMemoryPanel() override;

    /// A training model (no recomputation yet) or null / a forward model (the panel says so).
    void setModel(std::shared_ptr<const ir::Model> model);
    /// "none", "sqrt", "mincut", "all" or "budget"; replans.
    void setStrategy(const QString& strategy);
    /// Budget in bytes for the slider (clamped to its range); replans when the budget strategy is on.
    void setBudget(int64_t bytes);

    bool isPlanning() const;
    /// Drops the running job's result (recomputation cannot be interrupted midway).
    void cancelPlanning();
    const TrainingPlanResult& result() const { return result_; }
    TrainingTimeline* timeline() const { return timeline_; }
    TradeoffChart* tradeoffChart() const { return tradeoff_; }
    QString summaryText() const;
    /// Producers (in the shown training graph) of the activations the current plan recomputes.
    std::vector<ir::NodeId> recomputedNodes() const;

signals:
    void planReady();
    void nodesRequested(const std::vector<passlens::ir::NodeId>& nodes);

protected:
    void showEvent(QShowEvent* e) override;

private:
    void replan();
    autodiff::RecomputeOptions currentOptions() const;
    void showResult(const TrainingPlanResult& r);

    std::shared_ptr<const ir::Model> model_;
    bool needTradeoff_ = false;
    int64_t nonePeak_ = 0, lowestPeak_ = 0;
    TrainingPlanResult result_;
    LatestJob<TrainingPlanResult> planJob_;
    QComboBox* strategy_ = nullptr;
    QSlider* budget_ = nullptr;
    QLabel* budgetLabel_ = nullptr;
    QCheckBox* heavy_ = nullptr;
    QLabel* summary_ = nullptr;
    QTimer* debounce_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* showRecomputed_ = nullptr;
    TrainingTimeline* timeline_ = nullptr;
    TradeoffChart* tradeoff_ = nullptr;
};

}  // namespace passlens::ui
