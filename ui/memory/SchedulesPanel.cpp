#include "memory/SchedulesPanel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSvgRenderer>
#include <QSvgWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

#include "memory/BytesText.h"
#include "report/Charts.h"
#include "report/Memplan.h"

namespace passlens::ui {

ScheduleComparison compareSchedules(const ir::Model& model) {
    ScheduleComparison out;
    try {
        ir::Model m = model;
        auto assumed = report::pinUnpinnedDims(m, {});
        report::MemplanOptions options;
        options.schedule = "best";
        const report::MemplanReport r = report::planModelMemory(m, std::move(assumed), options);
        out.svg = QByteArray::fromStdString(plot::renderSvg(report::scheduleChart(m, m.graph, r.runs, r.bound.bytes)));
        for (const auto& run : r.runs)
            if (run.run.name == "exporter") out.exporterPeak = run.peakLiveBytes;
        out.bestPeak = r.chosen().peakLiveBytes;
        // "best (search)": the scheduler best kept.
        out.bestName = QString::fromStdString(r.chosen().run.name);
        if (out.bestName.startsWith("best (") && out.bestName.endsWith(")")) out.bestName = out.bestName.mid(6).chopped(1);
        out.bound = r.bound.bytes;
        out.bestOrder = r.chosen().schedule.order;
        out.bestLiveBytes = r.plan.liveBytesPerStep;
        // The peak step of the best order, and every planned tensor live at it.
        const auto& live = r.plan.liveBytesPerStep;
        if (!live.empty()) {
            const int peak = static_cast<int>(std::max_element(live.begin(), live.end()) - live.begin());
            std::set<ir::NodeId> producers;
            for (const auto& b : r.plan.buffers) {
                if (b.value == ir::kNone || b.bytes == 0 || b.first > peak || b.last < peak) continue;
                out.peakValues.push_back(b.value);
                const ir::NodeId p = m.graph.value(b.value).producer;
                if (p != ir::kNone) producers.insert(p);
            }
            out.peakNodes.assign(producers.begin(), producers.end());
        }
        const double saved = out.exporterPeak > 0 ? 100.0 * static_cast<double>(out.exporterPeak - out.bestPeak) / static_cast<double>(out.exporterPeak) : 0;
        const QString verdict = out.bestPeak <= out.bound ? QString("the best schedule meets it, so it is optimal.")
                                : r.chosen().run.optimal
                                    ? QString("the exact search proved the best schedule optimal (the bound is not tight here).")
                                    : QString("the best schedule is %1 above it and not proven optimal.").arg(bytesText(out.bestPeak - out.bound));
        out.summary = QString("Exporter order peaks at <b>%1</b>; the best schedule (found by %2) at <b>%3</b> (%4% lower). "
                              "No order can go below <b>%5</b> (any-order bound): %6")
                          .arg(bytesText(out.exporterPeak), out.bestName.toHtmlEscaped(), bytesText(out.bestPeak),
                               QString::number(saved, 'f', 1), bytesText(out.bound), verdict);
        if (!r.assumed.empty()) {
            QStringList dims;
            for (const auto& [name, value] : r.assumed) dims << QString("%1=%2").arg(QString::fromStdString(name)).arg(value);
            out.summary += "<br>Symbolic dims planned at " + dims.join(", ").toHtmlEscaped() + ".";
        }
    } catch (const std::exception& e) {
        out = {};
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

SchedulesPanel::SchedulesPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("schedulesPanel");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    summary_ = new QLabel(this);
    summary_->setObjectName("schedulesSummary");
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setMinimumHeight(2 * summary_->fontMetrics().lineSpacing() + 4);  // the verdict wraps on narrow docks
    bar->addWidget(summary_, 1);
    showPeak_ = new QPushButton("Show Peak Tensors", this);
    showPeak_->setObjectName("showPeakTensors");
    showPeak_->setToolTip("Select on the graph the producers of the tensors live at the best schedule's peak");
    showPeak_->setEnabled(false);
    bar->addWidget(showPeak_, 0, Qt::AlignTop);
    root->addLayout(bar);
    auto* stepBar = new QHBoxLayout;
    step_ = new QSlider(Qt::Horizontal, this);
    step_->setObjectName("scheduleStep");
    step_->setToolTip("Step through the best schedule: the node at each step is selected on the graph");
    step_->setEnabled(false);
    stepLabel_ = new QLabel(this);
    stepLabel_->setObjectName("scheduleStepLabel");
    stepBar->addWidget(new QLabel("Step through the best order:", this));
    stepBar->addWidget(step_, 1);
    stepBar->addWidget(stepLabel_, 1);
    root->addLayout(stepBar);
    chart_ = new QSvgWidget(this);
    chart_->setObjectName("schedulesChart");
    chart_->setMinimumHeight(120);
    chart_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    root->addWidget(chart_, 1);
    connect(showPeak_, &QPushButton::clicked, this, [this] { emit nodesRequested(result_.peakNodes); });
    connect(step_, &QSlider::valueChanged, this, &SchedulesPanel::showStep);
}

// job_ stops and waits for its worker; the job holds its own reference to the model.
SchedulesPanel::~SchedulesPanel() = default;

void SchedulesPanel::setModel(std::shared_ptr<const ir::Model> model) {
    job_.cancel();
    model_ = std::move(model);
    result_ = {};
    chart_->load(QByteArray());
    showPeak_->setEnabled(false);
    summary_->setText(model_ ? "Schedules are compared when this tab is shown." : QString());
    stale_ = model_ != nullptr;
    if (stale_ && isVisible()) run();
}

void SchedulesPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (stale_ && !job_.isBusy()) run();
}

void SchedulesPanel::run() {
    if (!model_) return;
    stale_ = false;
    summary_->setText("Scheduling…");
    auto model = model_;
    job_.request([model](const JobControl&) { return compareSchedules(*model); }, [this](ScheduleComparison r) { showResult(r); });
}

void SchedulesPanel::showResult(const ScheduleComparison& r) {
    result_ = r;
    if (!r.error.isEmpty()) {
        summary_->setText("Scheduling failed: " + r.error.toHtmlEscaped());
        chart_->load(QByteArray());
    } else {
        summary_->setText(r.summary);
        chart_->load(r.svg);
        chart_->renderer()->setAspectRatioMode(Qt::KeepAspectRatio);
    }
    showPeak_->setEnabled(!r.peakNodes.empty());
    {
        QSignalBlocker quiet(step_);
        step_->setRange(0, std::max(0, static_cast<int>(r.bestOrder.size()) - 1));
        step_->setValue(0);
    }
    step_->setEnabled(!r.bestOrder.empty());
    stepLabel_->clear();
    showPeak_->setText(r.peakNodes.empty() ? QString("Show Peak Tensors") : QString("Show %1 Peak Tensors").arg(r.peakValues.size()));
    emit ready();
}

void SchedulesPanel::showStep(int step) {
    if (!model_ || step < 0 || step >= static_cast<int>(result_.bestOrder.size())) return;
    if (step_->value() != step) return step_->setValue(step);  // valueChanged comes back here
    const ir::NodeId n = result_.bestOrder[static_cast<size_t>(step)];
    const int64_t live = step < static_cast<int>(result_.bestLiveBytes.size()) ? result_.bestLiveBytes[static_cast<size_t>(step)] : 0;
    stepLabel_->setText(QString("step %1 of %2: %3 · live %4%5")
                            .arg(step)
                            .arg(result_.bestOrder.size())
                            .arg(QString::fromStdString(model_->graph.node(n).displayName()), bytesText(live),
                                 live == result_.bestPeak ? QString(" (the peak)") : QString()));
    emit nodesRequested({n});
}

}  // namespace passlens::ui
