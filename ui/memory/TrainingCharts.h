#pragma once
// The two charts of the memory dock's Training tab, painted with QPainter:
// - TrainingTimeline: every planned buffer as a bar over the schedule, forward and backward on one
//   time axis with the phase boundary marked; bars colored by phase, saved-for-backward tensors
//   highlighted; hovering a bar lists the backward nodes that read it.
// - TradeoffChart: planned peak against extra recompute FLOPs (in forward passes) per strategy.
#include <QString>
#include <QWidget>
#include <memory>
#include <vector>

#include "autodiff/TrainingMemory.h"
#include "memory/MemoryPlan.h"

namespace passlens::ui {

class TrainingTimeline : public QWidget {
    Q_OBJECT
public:
    explicit TrainingTimeline(QWidget* parent = nullptr);
    void setData(std::shared_ptr<const memory::MemoryPlan> plan, std::shared_ptr<const autodiff::TrainingMemory> training);
    void clear();

    int rowCount() const;
    /// Rows drawn as saved-for-backward (highlighted).
    int highlightedCount() const;
    /// Widget point at the middle of row `row`'s bar (tests, hover).
    QPointF rowCenter(int row) const;
    /// Buffer index of a row (rows are the plan's buffers in order of first step).
    int bufferOfRow(int row) const { return order_.at(static_cast<size_t>(row)); }
    /// Hover text at a widget point ("" when no bar is there).
    QString describeAt(const QPointF& pos) const;
    /// x of the phase boundary line, or -1.
    double boundaryX() const;

    QSize sizeHint() const override { return {720, 300}; }
    QSize minimumSizeHint() const override { return {240, 140}; }

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;

private:
    QRectF plotRect() const;
    double xOf(double step) const;
    int rowAt(const QPointF& pos) const;

    std::shared_ptr<const memory::MemoryPlan> plan_;
    std::shared_ptr<const autodiff::TrainingMemory> training_;
    std::vector<int> order_;  ///< buffer indices, by first step
    int steps_ = 0;
};

struct TradeoffPoint {
    QString label;          ///< "store-all", "sqrt", "all"; empty for a point of the Pareto curve
    double extraPasses = 0; ///< extra FLOPs / one forward pass
    int64_t peakBytes = 0;
    bool onCurve = false;   ///< a point of the Pareto curve (joined by the line), else a reference
};

class TradeoffChart : public QWidget {
    Q_OBJECT
public:
    explicit TradeoffChart(QWidget* parent = nullptr);
    void setPoints(std::vector<TradeoffPoint> points);
    /// The point of the strategy shown in the timeline (drawn larger); -1 none.
    void setCurrent(double extraPasses, int64_t peakBytes);
    const std::vector<TradeoffPoint>& points() const { return points_; }

    QSize sizeHint() const override { return {320, 220}; }
    QSize minimumSizeHint() const override { return {200, 140}; }
    /// The point drawn nearest `pos` (within 10 px), -1 when none: what a click picks.
    int pointAt(const QPointF& pos) const;

signals:
    /// A point was clicked: its index in points().
    void pointClicked(int index);

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent* e) override;

private:
    /// Widget position of a point (the same axes paintEvent draws).
    QPointF position(double extraPasses, int64_t peakBytes) const;
    QRectF plotRect() const;

    std::vector<TradeoffPoint> points_;
    bool hasCurrent_ = false;
    TradeoffPoint current_;
};

/// Fill color of a phase ("forward", "loss", "backward", "recompute").
QColor phaseColor(const std::string& phase);

}  // namespace passlens::ui
