#pragma once
// One memory chart (lifetimes, arena or live bytes) of one plan, painted with QPainter from the
// GUI-less geometry in core/plot. The same paint routine draws on screen and into PNG/SVG exports.
// Hover shows the tensor under the mouse; a click emits valueClicked for the graph view.
#include <QWidget>
#include <memory>

#include "ir/Graph.h"
#include "memory/MemoryPlan.h"
#include "plot/MemoryCharts.h"

namespace passlens::ui {

class MemoryChartWidget : public QWidget {
    Q_OBJECT
public:
    enum class Kind { Lifetime, Arena, LiveBytes };

    explicit MemoryChartWidget(Kind kind, QWidget* parent = nullptr);

    /// `title` names the model and planner; the chart kind is added by the widget.
    void setPlan(std::shared_ptr<const memory::MemoryPlan> plan, const QString& title);
    /// Colors the lifetime bars by the arena bands of `colorPlan` (the plan shown next to it).
    void setBandSource(std::shared_ptr<const memory::MemoryPlan> colorPlan);
    void clear();

    Kind kind() const { return kind_; }
    const memory::MemoryPlan* plan() const { return plan_.get(); }
    QString chartTitle() const;
    QString chartSubject() const;  ///< what the chart shows, without whose plan

    /// Paints the whole chart (title, legend, axes, data) into `bounds`.
    void paintChart(QPainter& p, const QRectF& bounds) const;
    bool exportPng(const QString& path, QSize size = {}) const;
    bool exportSvg(const QString& path, QSize size = {}) const;

    /// Rectangles/bars drawn at the current size (arena: one per buffer; lifetime: one per tensor).
    int drawnItemCount() const;
    /// What one repaint fills after level of detail: arena runs, lifetime pieces, live-bytes curve
    /// points (at most a few per pixel, however many buffers, tensors or steps).
    int paintedItemCount() const;
    /// Widget coordinates of the center of buffer/tensor `index`'s rectangle (arena/lifetime).
    QPointF itemCenter(int index) const;
    /// Buffer (arena) or tensor (lifetime) index under a widget point, or -1.
    int itemAt(const QPointF& pos) const;
    /// The tooltip text for a widget point ("" when nothing is there).
    QString describeAt(const QPointF& pos) const;
    /// Outlines the buffer (arena) or tensor (lifetime) of `value` — the graph's selection; kNone
    /// clears. Returns whether the value is in this chart.
    bool setSelectedValue(ir::ValueId value);
    int selectedItem() const { return selected_; }

    QSize sizeHint() const override { return {640, 280}; }
    QSize minimumSizeHint() const override { return {240, 140}; }

signals:
    void valueClicked(passlens::ir::ValueId value);

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void leaveEvent(QEvent*) override;
    void contextMenuEvent(QContextMenuEvent* e) override;

private:
    plot::PlotArea plotArea(const QRectF& bounds) const;
    void paintArena(QPainter& p, const plot::PlotArea& a) const;
    void paintLifetimes(QPainter& p, const plot::PlotArea& a) const;
    void paintLiveBytes(QPainter& p, const plot::PlotArea& a) const;
    void paintXAxis(QPainter& p, const plot::PlotArea& a, const std::vector<plot::Tick>& ticks) const;
    void paintYAxis(QPainter& p, const plot::PlotArea& a, const std::vector<plot::Tick>& ticks, const QString& title) const;
    void paintLegend(QPainter& p, const QRectF& bounds) const;
    QColor bandColorForTensor(int tensor) const;
    QString stepName(int step) const;

    Kind kind_;
    std::shared_ptr<const memory::MemoryPlan> plan_;
    std::shared_ptr<const memory::MemoryPlan> bandSource_;
    std::vector<int> bandOfTensor_;  ///< from bandSource_ (or plan_), per lifetime index
    QString title_;
    int hovered_ = -1;
    int selected_ = -1;  ///< buffer (arena) or tensor (lifetime) index selected from the graph
};

/// Distinct, readable fill color for arena band `band` (golden-angle hues, alternating lightness).
QColor bandColor(int band);

}  // namespace passlens::ui
