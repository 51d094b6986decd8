#include "memory/MemoryView.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>

#include "autodiff/TrainingMemory.h"
#include "ir/Error.h"
#include "memory/BufferTableModel.h"
#include "eval/Interpreter.h"
#include "memory/BytesText.h"
#include "memory/MemoryChartWidget.h"
#include "memory/SchedulesPanel.h"
#include "memory/TrainingMemoryPanel.h"
#include "report/Memplan.h"
#include "schedule/GraphSchedule.h"
#include "schedule/Schedulers.h"

namespace passlens::ui {

PlanSnapshot planSnapshot(const ir::Model& shownModel, const ir::Graph& shownGraph, const QString& primary, const QString& compare,
                          const QString& schedule) {
    PlanSnapshot s;
    try {
        // Symbolic input dims the user did not set (Dims field) are planned at 1, like the CLI,
        // so every value is counted; the view says which it assumed. Bodies plan as they are.
        std::optional<ir::Model> pinned;
        if (&shownGraph == &shownModel.graph && !eval::unpinnedDims(shownModel, {}).empty()) {
            pinned.emplace(shownModel);
            for (const auto& [name, value] : report::pinUnpinnedDims(*pinned, {}))
                s.assumedDims << QString::fromStdString(name) + "=" + QString::number(value);
        }
        const ir::Model& model = pinned ? *pinned : shownModel;
        const ir::Graph& graph = pinned ? pinned->graph : shownGraph;
        memory::PlanOptions o;
        o.planner = primary.toStdString();
        if (schedule == "model" || schedule == "memory") {
            o.schedule = schedule == "model" ? memory::ScheduleKind::Model : memory::ScheduleKind::MemoryAware;
            s.primary = std::make_shared<const memory::MemoryPlan>(memory::planMemory(model, graph, o));
        } else {
            // A scheduler of core/schedule (exporter, dfs, ..., search, best): its order, then the planner.
            const auto problem = schedule::buildProblem(model, graph);
            const auto run = schedule::scheduleGraph(model, graph, problem, schedule.toStdString());
            s.primary = std::make_shared<const memory::MemoryPlan>(schedule::planWithSchedule(model, graph, run.schedule, o));
        }
        if (!compare.isEmpty()) {
            // Same schedule and lifetimes: only the placement differs, so plan the lifetime set.
            auto other = memory::planLifetimes(s.primary->lifetimes, compare.toStdString());
            memory::MemoryPlan full = *s.primary;  // totals, schedule, lifetimes are shared facts
            full.planner = other.planner;
            full.arenaBytes = other.arenaBytes;
            full.buffers = std::move(other.buffers);
            s.compare = std::make_shared<const memory::MemoryPlan>(std::move(full));
        }
    } catch (const std::exception& e) {
        s.primary.reset();
        s.compare.reset();
        s.error = QString::fromUtf8(e.what());
    }
    return s;
}

MemoryView::MemoryView(QWidget* parent) : QWidget(parent) {
    setObjectName("memoryView");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);

    auto* bar = new QHBoxLayout;
    plannerBox_ = new QComboBox(this);
    plannerBox_->setObjectName("plannerBox");
    compareBox_ = new QComboBox(this);
    compareBox_->setObjectName("compareBox");
    compareBox_->addItem("(none)", QString());
    for (const auto& name : memory::plannerNames()) {
        plannerBox_->addItem(QString::fromStdString(name), QString::fromStdString(name));
        compareBox_->addItem(QString::fromStdString(name), QString::fromStdString(name));
    }
    plannerBox_->setCurrentText("best");
    scheduleBox_ = new QComboBox(this);
    scheduleBox_->setObjectName("scheduleBox");
    scheduleBox_->addItem("model order", "model");
    scheduleBox_->addItem("memory-aware order", "memory");
    // The schedulers of core/schedule: the lifetime chart and the plan follow the chosen order.
    for (const auto& name : schedule::schedulerNames())
        if (name != "exporter") scheduleBox_->addItem(QString::fromStdString(name) + " schedule", QString::fromStdString(name));
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);  // the planners report no progress: show activity only
    busy_->setMaximumWidth(120);
    busy_->setVisible(false);
    cancel_ = new QPushButton("Cancel", this);
    cancel_->setToolTip("Discard the running plan (the planner finishes in the background)");
    cancel_->setVisible(false);
    status_ = new QLabel(this);
    bar->addWidget(new QLabel("Planner:", this));
    bar->addWidget(plannerBox_);
    bar->addSpacing(12);
    bar->addWidget(new QLabel("Compare with:", this));
    bar->addWidget(compareBox_);
    bar->addSpacing(12);
    bar->addWidget(new QLabel("Schedule:", this));
    bar->addWidget(scheduleBox_);
    bar->addSpacing(12);
    bar->addWidget(busy_);
    bar->addWidget(cancel_);
    bar->addWidget(status_, 1);
    root->addLayout(bar);

    totals_ = new QLabel(this);
    totals_->setObjectName("memoryTotals");
    totals_->setTextFormat(Qt::RichText);
    totals_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    root->addWidget(totals_);

    tabs_ = new QTabWidget(this);
    auto* charts = new QWidget(tabs_);
    chartGrid_ = new QGridLayout(charts);
    chartGrid_->setContentsMargins(0, 0, 0, 0);
    chartGrid_->setSpacing(4);
    lifetime_ = new MemoryChartWidget(MemoryChartWidget::Kind::Lifetime, charts);
    for (int side = 0; side < 2; ++side) {
        arena_[side] = new MemoryChartWidget(MemoryChartWidget::Kind::Arena, charts);
        live_[side] = new MemoryChartWidget(MemoryChartWidget::Kind::LiveBytes, charts);
        arena_[side]->setObjectName(side == 0 ? "arenaChart" : "arenaChartCompare");
        live_[side]->setObjectName(side == 0 ? "liveBytesChart" : "liveBytesChartCompare");
        connect(arena_[side], &MemoryChartWidget::valueClicked, this, &MemoryView::onValueClicked);
    }
    connect(lifetime_, &MemoryChartWidget::valueClicked, this, &MemoryView::onValueClicked);
    arrangeCharts(false);
    tabs_->addTab(charts, "Charts");

    buffers_ = new BufferTableModel(this);
    auto* proxy = new QSortFilterProxyModel(this);
    proxy->setSourceModel(buffers_);
    proxy->setSortRole(Qt::UserRole);
    table_ = new QTableView(tabs_);
    table_->setModel(proxy);
    table_->setSortingEnabled(true);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->setVisible(false);
    connect(table_, &QTableView::activated, this, [this, proxy](const QModelIndex& i) {
        QVariant v = buffers_->data(proxy->mapToSource(i.siblingAtColumn(BufferTableModel::Value)), Qt::UserRole);
        if (v.isValid()) onValueClicked(static_cast<ir::ValueId>(v.toULongLong()));
    });
    tabs_->addTab(table_, "Buffers (primary planner)");
    schedules_ = new SchedulesPanel(tabs_);
    schedulesTab_ = tabs_->addTab(schedules_, "Schedules");
    tabs_->setTabEnabled(schedulesTab_, false);
    connect(schedules_, &SchedulesPanel::nodesRequested, this, &MemoryView::nodesRequested);
    training_ = new TrainingMemoryPanel(tabs_);
    connect(training_, &TrainingMemoryPanel::nodesRequested, this, &MemoryView::nodesRequested);
    trainingTab_ = tabs_->addTab(training_, "Training");
    tabs_->setTabEnabled(trainingTab_, false);
    root->addWidget(tabs_, 1);

    connect(cancel_, &QPushButton::clicked, this, &MemoryView::cancelPlanning);
    auto replanOnChange = [this] { replan(); };
    connect(plannerBox_, &QComboBox::currentIndexChanged, this, replanOnChange);
    connect(compareBox_, &QComboBox::currentIndexChanged, this, replanOnChange);
    connect(scheduleBox_, &QComboBox::currentIndexChanged, this, replanOnChange);
    updateLayoutForComparison(false);
}

// planJob_ stops and waits for its worker; the job holds its own reference to the model.
MemoryView::~MemoryView() = default;

void MemoryView::setGraph(std::shared_ptr<const ir::Model> model, const ir::Graph* snapshotGraph, const QString& title) {
    model_ = std::move(model);
    graph_ = model_ ? (snapshotGraph ? snapshotGraph : &model_->graph) : nullptr;
    title_ = title.isEmpty() && graph_ ? QString::fromStdString(graph_->name) : title;
    // The Training tab plans the main graph of training models on its own worker.
    const bool training = model_ && graph_ == &model_->graph && autodiff::isTrainingGraph(model_->graph);
    training_->setModel(training ? model_ : nullptr);
    // Schedules are compared for the main graph (a subgraph body runs inside its parent's step).
    const bool mainGraph = model_ && graph_ == &model_->graph;
    schedules_->setModel(mainGraph ? model_ : nullptr);
    tabs_->setTabEnabled(schedulesTab_, mainGraph);
    tabs_->setTabEnabled(trainingTab_, training);
    if (!model_) {
        planJob_.cancel();
        busy_->setVisible(false);
        cancel_->setVisible(false);
        setData({});
        return;
    }
    replan();
}

void MemoryView::setPlanners(const QString& primary, const QString& compare) {
    QSignalBlocker a(plannerBox_), b(compareBox_);
    int i = plannerBox_->findData(primary);
    if (i >= 0) plannerBox_->setCurrentIndex(i);
    int j = compareBox_->findData(compare);
    compareBox_->setCurrentIndex(j >= 0 ? j : 0);
    replan();
}

// Planning lasts until the result is shown, not until the worker returns (LatestJob::isBusy).
bool MemoryView::isPlanning() const { return planJob_.isBusy(); }

void MemoryView::cancelPlanning() {
    planJob_.cancel();
    busy_->setVisible(false);
    cancel_->setVisible(false);
    status_->setText("Planning cancelled.");
}

void MemoryView::replan() {
    if (!model_ || !graph_) return;
    busy_->setVisible(true);
    cancel_->setVisible(true);
    status_->setText("Planning…");
    auto model = model_;
    const ir::Graph* graph = graph_;
    QString primary = plannerBox_->currentData().toString();
    QString compare = compareBox_->currentData().toString();
    const QString schedule = scheduleBox_->currentData().toString();
    QString title = title_;
    // A newer request supersedes this one (its result is dropped); only the newest is shown.
    planJob_.request(
        [model, graph, primary, compare, schedule, title](const JobControl&) {
            PlanSnapshot s = planSnapshot(*model, *graph, primary, compare, schedule);
            s.modelTitle = title;
            return s;
        },
        [this](PlanSnapshot s) {
            busy_->setVisible(false);
            cancel_->setVisible(false);
            setData(s);
        });
}

void MemoryView::setData(const PlanSnapshot& s) {
    snapshot_ = s;
    bool comparing = s.compare != nullptr;
    updateLayoutForComparison(comparing);
    if (!s.primary) {
        lifetime_->clear();
        for (int side = 0; side < 2; ++side) {
            arena_[side]->clear();
            live_[side]->clear();
        }
        buffers_->setPlan(nullptr);
        totals_->clear();
        status_->setText(s.error.isEmpty() ? QString() : "Planning failed: " + s.error);
        if (!s.error.isEmpty()) emit planFailed(s.error);
        return;
    }
    auto titleFor = [&](const memory::MemoryPlan& p) {
        QString model = s.modelTitle.isEmpty() ? QString("model") : s.modelTitle;
        return QString("%1 · %2").arg(model, QString::fromStdString(p.planner));
    };
    lifetime_->setBandSource(s.primary);
    lifetime_->setPlan(s.primary, s.modelTitle.isEmpty() ? QString("model") : s.modelTitle);
    arena_[0]->setPlan(s.primary, titleFor(*s.primary));
    live_[0]->setPlan(s.primary, titleFor(*s.primary));
    if (comparing) {
        arena_[1]->setPlan(s.compare, titleFor(*s.compare));
        live_[1]->setPlan(s.compare, titleFor(*s.compare));
    } else {
        arena_[1]->clear();
        live_[1]->clear();
    }
    buffers_->setPlan(s.primary);
    totals_->setText(totalsText());
    QStringList notes;
    if (!s.assumedDims.isEmpty())
        notes << QString("planned at %1 (not set: give sizes in the Dims field)").arg(s.assumedDims.join(", "));
    if (!s.primary->unknownSizeValues.empty())
        notes << QString("%1 values of unknown size are left out").arg(s.primary->unknownSizeValues.size());
    status_->setText(notes.join(" · "));
    emit planReady();
}

QString MemoryView::totalsText() const {
    const auto* p = snapshot_.primary.get();
    if (!p) return {};
    auto ratio = [](int64_t a, int64_t b) { return b > 0 ? QString::number(double(a) / double(b), 'f', 2) : QString("–"); };
    QString facts = QString("<b>static</b> %1 (parameters %2, constants %3, inputs %4, outputs %5) &nbsp; "
                            "<b>dynamic</b> %6 (workspace %7) &nbsp; <b>naive</b> %8 &nbsp; "
                            "<b>lower bound</b> %9 &nbsp; %10 steps, %11 buffers")
                        .arg(bytesText(p->staticBytes), bytesText(p->parameterBytes), bytesText(p->constantBytes),
                             bytesText(p->inputBytes), bytesText(p->outputBytes), bytesText(p->dynamicBytes),
                             bytesText(p->workspaceBytes), bytesText(p->naiveBytes), bytesText(p->lowerBoundBytes))
                        .arg(p->scheduleNames.size())
                        .arg(p->buffers.size());
    auto arenaLine = [&](const memory::MemoryPlan& q) {
        return QString("<b>arena (%1)</b> %2 = %3× lower bound, %4× smaller than naive")
            .arg(QString::fromStdString(q.planner).toHtmlEscaped(), bytesText(q.arenaBytes),
                 ratio(q.arenaBytes, q.lowerBoundBytes), ratio(q.naiveBytes, q.arenaBytes));
    };
    QString arenas = arenaLine(*p);
    if (snapshot_.compare) arenas += " &nbsp;|&nbsp; " + arenaLine(*snapshot_.compare);
    return facts + "<br>" + arenas;
}

bool MemoryView::selectValue(ir::ValueId value) {
    bool found = lifetime_->setSelectedValue(value);
    for (int side = 0; side < 2; ++side) found |= arena_[side]->setSelectedValue(value);
    return found;
}

void MemoryView::arrangeCharts(bool wide) {
    // Tall (a side dock): lifetime on top, arena, live bytes below. Wide and short (the bottom
    // dock): the three side by side, each the dock's full height. A compared planner's charts
    // sit under (tall) or beside (wide) the primary's.
    if (!chartGrid_->isEmpty() && wide == wideCharts_) return;
    wideCharts_ = wide;
    for (QWidget* c : {static_cast<QWidget*>(lifetime_), static_cast<QWidget*>(arena_[0]), static_cast<QWidget*>(arena_[1]),
                       static_cast<QWidget*>(live_[0]), static_cast<QWidget*>(live_[1])})
        chartGrid_->removeWidget(c);
    for (int i = 0; i < 4; ++i) { chartGrid_->setRowStretch(i, 0); chartGrid_->setColumnStretch(i, 0); }
    if (wide) {
        chartGrid_->addWidget(lifetime_, 0, 0, 2, 1);
        chartGrid_->addWidget(arena_[0], 0, 1);
        chartGrid_->addWidget(arena_[1], 1, 1);
        chartGrid_->addWidget(live_[0], 0, 2);
        chartGrid_->addWidget(live_[1], 1, 2);
        chartGrid_->setColumnStretch(0, 4);
        chartGrid_->setColumnStretch(1, 3);
        chartGrid_->setColumnStretch(2, 3);
        chartGrid_->setRowStretch(0, 1);
        chartGrid_->setRowStretch(1, arena_[1]->isVisibleTo(this) ? 1 : 0);  // a compared planner's row
    } else {
        chartGrid_->addWidget(lifetime_, 0, 0, 1, 2);
        chartGrid_->addWidget(arena_[0], 1, 0);
        chartGrid_->addWidget(arena_[1], 1, 1);
        chartGrid_->addWidget(live_[0], 2, 0);
        chartGrid_->addWidget(live_[1], 2, 1);
        chartGrid_->setRowStretch(0, 3);
        chartGrid_->setRowStretch(1, 4);
        chartGrid_->setRowStretch(2, 3);
    }
}

void MemoryView::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    arrangeCharts(width() > 2 * height());
}

void MemoryView::updateLayoutForComparison(bool comparing) {
    arena_[1]->setVisible(comparing);
    live_[1]->setVisible(comparing);
    if (wideCharts_) chartGrid_->setRowStretch(1, comparing ? 1 : 0);
}

void MemoryView::onValueClicked(ir::ValueId v) {
    emit valueClicked(v);
    if (!model_ || !graph_ || !graph_->hasValue(v)) return;
    const ir::Value& value = graph_->value(v);
    std::vector<ir::NodeId> nodes;
    if (value.producer != ir::kNone) nodes.push_back(value.producer);
    for (ir::NodeId c : value.consumers)
        if (std::find(nodes.begin(), nodes.end(), c) == nodes.end()) nodes.push_back(c);
    emit nodesRequested(nodes);
}

}  // namespace passlens::ui
