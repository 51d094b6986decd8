#pragma once
// The memory dock's Schedules tab (#31): the live bytes per step of the exporter's order and of
// the best schedule PassLens finds, overlaid, with each peak and the any-order lower bound marked
// (the chart `passlens-cli memplan --schedule best --svg` writes, from core/report/Charts), a line
// saying how far each is from the bound, and the tensors live at the best schedule's peak, which
// one click shows on the graph; a slider steps through the best order node by node. Scheduling
// runs on a worker; a hidden tab costs nothing.
#include <QWidget>
#include <memory>
#include <vector>

#include "LatestJob.h"

#include "ir/Model.h"

class QLabel;
class QPushButton;
class QSlider;
class QSvgWidget;

namespace passlens::ui {

/// One finished comparison (any thread makes it; immutable after).
struct ScheduleComparison {
    QByteArray svg;                       ///< the chart
    QString summary;                      ///< peaks, bound, optimal or not (rich text)
    int64_t exporterPeak = 0, bestPeak = 0, bound = 0;
    QString bestName;                     ///< the scheduler `best` kept
    std::vector<ir::ValueId> peakValues;  ///< tensors live at the best schedule's peak step
    std::vector<ir::NodeId> peakNodes;    ///< their producers
    std::vector<ir::NodeId> bestOrder;    ///< the best schedule, node by node
    std::vector<int64_t> bestLiveBytes;   ///< live bytes at each of its steps
    QString error;
};

/// Schedules `model`'s main graph with every scheduler (exporter order first, best last) and plans
/// it on the best order. Symbolic input dims are planned at 1. Never throws.
ScheduleComparison compareSchedules(const ir::Model& model);

class SchedulesPanel : public QWidget {
    Q_OBJECT
public:
    explicit SchedulesPanel(QWidget* parent = nullptr);
    ~SchedulesPanel() override;

    /// The model whose main graph is scheduled (null clears). Runs when the panel is visible.
    void setModel(std::shared_ptr<const ir::Model> model);
    const ScheduleComparison& result() const { return result_; }
    /// Steps through the best schedule: selects the node at `step` on the graph (nodesRequested).
    void showStep(int step);
    bool isBusy() const { return job_.isBusy(); }

signals:
    void ready();
    void nodesRequested(const std::vector<passlens::ir::NodeId>& nodes);

protected:
    void showEvent(QShowEvent* e) override;

private:
    void run();
    void showResult(const ScheduleComparison& r);

    std::shared_ptr<const ir::Model> model_;
    bool stale_ = false;
    ScheduleComparison result_;
    LatestJob<ScheduleComparison> job_;
    QLabel* summary_ = nullptr;
    QSvgWidget* chart_ = nullptr;
    QPushButton* showPeak_ = nullptr;
    QSlider* step_ = nullptr;
    QLabel* stepLabel_ = nullptr;
};

}  // namespace passlens::ui
