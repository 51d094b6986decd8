#include "memory/TrainingMemoryPanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <exception>

#include "memory/BytesText.h"

namespace passlens::ui {

namespace {
double passesOf(const autodiff::RecomputeResult& r) { return r.forwardFlops > 0 ? r.extraFlops / r.forwardFlops : 0.0; }
constexpr int kSliderSteps = 1000;
}  // namespace

TrainingPlanResult planTrainingStrategy(const ir::Model& base, const autodiff::RecomputeOptions& options, bool tradeoff) {
    TrainingPlanResult out;
    out.options = options;
    try {
        ir::Model m = base;
        out.recompute = autodiff::recomputeModel(m, options, false);
        memory::PlanOptions po;
        auto plan = std::make_shared<memory::MemoryPlan>(memory::planMemory(m, m.graph, po));
        out.training = std::make_shared<const autodiff::TrainingMemory>(autodiff::analyzeTrainingMemory(m, *plan, po));
        out.plan = std::move(plan);
        if (!tradeoff) return out;
        // The Pareto curve (every choice planned, core/autodiff RecomputeSearch) with store-all,
        // √n and all as references: what `grad --recompute pareto` prints.
        autodiff::RecomputeOptions curveOptions;
        curveOptions.heavy = options.heavy;
        const autodiff::RecomputeCurve c = autodiff::recomputeCurve(base, curveOptions);
        auto passes = [&](double flops) { return c.forwardFlops > 0 ? flops / c.forwardFlops : 0.0; };
        for (const auto& q : c.curve) out.tradeoff.push_back({QString(), passes(q.extraFlops), q.arenaBytes, true});
        out.tradeoff.push_back({"store-all", 0.0, c.storeAll.arenaBytes, false});
        if (c.sqrt.arenaBytes != c.storeAll.arenaBytes || c.sqrt.extraFlops != 0)
            out.tradeoff.push_back({"sqrt", passes(c.sqrt.extraFlops), c.sqrt.arenaBytes, false});
        out.tradeoff.push_back({"all", passes(c.all.extraFlops), c.all.arenaBytes, false});
        // The slider's low end: the lowest arena on the curve.
        out.lowestPeak = c.storeAll.arenaBytes;
        for (const auto& p : out.tradeoff) out.lowestPeak = std::min(out.lowestPeak, p.peakBytes);
    } catch (const std::exception& e) {
        out.plan.reset();
        out.training.reset();
        out.error = QString::fromUtf8(e.what());
    }
    return out;
}

TrainingMemoryPanel::TrainingMemoryPanel(QWidget* parent) : QWidget(parent) {
    setObjectName("trainingMemoryPanel");
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(0, 4, 0, 0);
    auto* bar = new QHBoxLayout;
    strategy_ = new QComboBox(this);
    strategy_->setObjectName("recomputeStrategy");
    strategy_->addItem("none (keep every activation)", "none");
    strategy_->addItem("sqrt (Chen: √n checkpoints)", "sqrt");
    strategy_->addItem("min cut (PyTorch's partitioner)", "mincut");
    strategy_->addItem("all (recompute every activation)", "all");
    strategy_->addItem("budget (fewest FLOPs under the arena)", "budget");
    budget_ = new QSlider(Qt::Horizontal, this);
    budget_->setObjectName("recomputeBudget");
    budget_->setRange(0, kSliderSteps);
    budget_->setValue(kSliderSteps);
    budget_->setEnabled(false);
    budgetLabel_ = new QLabel(this);
    heavy_ = new QCheckBox("recompute MatMul/Gemm/Conv", this);
    heavy_->setChecked(true);
    heavy_->setToolTip("Off: activations whose recomputation needs a MatMul/Gemm/Conv stay saved (PyTorch's partitioner rule)");
    bar->addWidget(new QLabel("Recompute:", this));
    bar->addWidget(strategy_);
    bar->addWidget(budget_, 1);
    bar->addWidget(budgetLabel_);
    bar->addWidget(heavy_);
    showRecomputed_ = new QPushButton("Show Recomputed", this);
    showRecomputed_->setObjectName("showRecomputed");
    showRecomputed_->setToolTip("Select on the graph the nodes whose outputs this plan recomputes in the backward pass");
    showRecomputed_->setEnabled(false);
    bar->addWidget(showRecomputed_);
    cancel_ = new QPushButton("Cancel", this);
    cancel_->setObjectName("cancelRecompute");
    cancel_->setToolTip("Discard the running plan (the worker finishes in the background)");
    cancel_->setVisible(false);
    bar->addWidget(cancel_);
    root->addLayout(bar);
    summary_ = new QLabel(this);
    summary_->setObjectName("trainingSummary");
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    root->addWidget(summary_);
    auto* charts = new QHBoxLayout;
    timeline_ = new TrainingTimeline(this);
    tradeoff_ = new TradeoffChart(this);
    charts->addWidget(timeline_, 3);
    charts->addWidget(tradeoff_, 1);
    root->addLayout(charts, 1);

    debounce_ = new QTimer(this);
    debounce_->setSingleShot(true);
    debounce_->setInterval(150);
    connect(debounce_, &QTimer::timeout, this, &TrainingMemoryPanel::replan);
    connect(cancel_, &QPushButton::clicked, this, &TrainingMemoryPanel::cancelPlanning);
    connect(strategy_, &QComboBox::currentIndexChanged, this, [this] {
        budget_->setEnabled(strategy_->currentData().toString() == "budget");
        replan();
    });
    connect(budget_, &QSlider::valueChanged, this, [this] {
        const auto o = currentOptions();
        budgetLabel_->setText(bytesText(o.budgetBytes));
        if (o.strategy == autodiff::RecomputeOptions::Strategy::Budget) debounce_->start();
    });
    // A point of the curve (or a reference) becomes the plan: a budget at its arena.
    connect(tradeoff_, &TradeoffChart::pointClicked, this, [this](int i) {
        const auto& points = tradeoff_->points();
        if (i < 0 || i >= static_cast<int>(points.size())) return;
        setBudget(points[static_cast<size_t>(i)].peakBytes);
        if (strategy_->currentData().toString() == "budget") replan();
        else setStrategy("budget");
    });
    connect(showRecomputed_, &QPushButton::clicked, this, [this] { emit nodesRequested(recomputedNodes()); });
    connect(heavy_, &QCheckBox::toggled, this, [this] {
        needTradeoff_ = true;
        replan();
    });
}

// planJob_ stops and waits for its worker.
TrainingMemoryPanel::~TrainingMemoryPanel() = default;

void TrainingMemoryPanel::setModel(std::shared_ptr<const ir::Model> model) {
    planJob_.cancel();
    model_ = model && autodiff::isTrainingGraph(model->graph) ? std::move(model) : nullptr;
    result_ = {};
    nonePeak_ = lowestPeak_ = 0;
    timeline_->clear();
    tradeoff_->setPoints({});
    if (!model_) {
        summary_->setText("Not a training graph: build one with Passes → Build Training Graph (or passlens-cli grad).");
        return;
    }
    needTradeoff_ = true;
    summary_->setText("Training graph: planned when this tab is shown.");
    if (isVisible()) replan();  // else showEvent plans it: a hidden tab costs nothing
}

void TrainingMemoryPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (model_ && !result_.training && !isPlanning()) replan();
}

void TrainingMemoryPanel::setStrategy(const QString& strategy) {
    const int i = strategy_->findData(strategy);
    if (i >= 0) strategy_->setCurrentIndex(i);
}

void TrainingMemoryPanel::setBudget(int64_t bytes) {
    if (nonePeak_ <= lowestPeak_) return;
    const double f = static_cast<double>(bytes - lowestPeak_) / static_cast<double>(nonePeak_ - lowestPeak_);
    budget_->setValue(std::clamp(static_cast<int>(f * kSliderSteps + 0.5), 0, kSliderSteps));
    if (currentOptions().strategy == autodiff::RecomputeOptions::Strategy::Budget) {
        debounce_->stop();
        replan();
    }
}

void TrainingMemoryPanel::cancelPlanning() {
    planJob_.cancel();
    debounce_->stop();
    cancel_->setVisible(false);
    summary_->setText("Planning cancelled.");
}

// Planning lasts until the result is handled, not until the worker returns: a small plan can be
// done before the caller even asks.
bool TrainingMemoryPanel::isPlanning() const { return planJob_.isBusy() || debounce_->isActive(); }

autodiff::RecomputeOptions TrainingMemoryPanel::currentOptions() const {
    autodiff::RecomputeOptions o;
    const QString s = strategy_->currentData().toString();
    o.strategy = s == "sqrt"     ? autodiff::RecomputeOptions::Strategy::Sqrt
                 : s == "mincut" ? autodiff::RecomputeOptions::Strategy::MinCut
                 : s == "all"    ? autodiff::RecomputeOptions::Strategy::All
                 : s == "budget" ? autodiff::RecomputeOptions::Strategy::Budget
                                 : autodiff::RecomputeOptions::Strategy::None;
    o.heavy = heavy_->isChecked();
    const double f = static_cast<double>(budget_->value()) / kSliderSteps;
    o.budgetBytes = lowestPeak_ + static_cast<int64_t>(f * static_cast<double>(nonePeak_ - lowestPeak_));
    return o;
}

void TrainingMemoryPanel::replan() {
    if (!model_) return;
    summary_->setText("Planning…");
    cancel_->setVisible(true);
    // The tradeoff curve is asked for until a run that computes it is shown (a superseded run's
    // result never is).
    const bool tradeoff = needTradeoff_;
    auto model = model_;
    const auto options = currentOptions();
    planJob_.request([model, options, tradeoff](const JobControl&) { return planTrainingStrategy(*model, options, tradeoff); },
                     [this, tradeoff](TrainingPlanResult r) {
                         if (tradeoff) needTradeoff_ = false;
                         showResult(r);
                     });
}

void TrainingMemoryPanel::showResult(const TrainingPlanResult& r) {
    result_ = r;
    cancel_->setVisible(false);
    if (!r.error.isEmpty()) {
        summary_->setText("Planning failed: " + r.error);
        timeline_->clear();
        emit planReady();
        return;
    }
    if (!r.tradeoff.empty()) {
        nonePeak_ = r.recompute.peakBefore;
        lowestPeak_ = std::min(r.lowestPeak, nonePeak_);
        tradeoff_->setPoints(r.tradeoff);
        budgetLabel_->setText(bytesText(currentOptions().budgetBytes));
    }
    timeline_->setData(r.plan, r.training);
    showRecomputed_->setEnabled(!r.recompute.dropped.empty());
    tradeoff_->setCurrent(passesOf(r.recompute), r.plan->arenaBytes);
    summary_->setText(summaryText());
    emit planReady();
}

std::vector<ir::NodeId> TrainingMemoryPanel::recomputedNodes() const {
    std::vector<ir::NodeId> out;
    if (!model_) return out;
    for (const auto& name : result_.recompute.dropped)
        if (auto v = model_->graph.findValue(name); v && model_->graph.value(*v).producer != ir::kNone)
            out.push_back(model_->graph.value(*v).producer);
    return out;
}

QString TrainingMemoryPanel::summaryText() const {
    const auto& r = result_;
    if (!r.training) return {};
    const auto& t = *r.training;
    QString s = QString("<b>%1</b>: arena %2 (without recomputation: arena %3) · extra %4 FLOPs = %5 forward passes · "
                        "saved for backward %6 tensors (%7) · buffers %8 naive → %9 planned (inference %10 → %11)")
                    .arg(QString::fromStdString(r.options.text()), bytesText(r.plan->arenaBytes),
                         bytesText(r.recompute.peakBefore), QString::number(r.recompute.extraFlops, 'g', 3),
                         QString::number(passesOf(r.recompute), 'f', 2))
                    .arg(t.savedActivations.count)
                    .arg(bytesText(t.savedActivations.bytes))
                    .arg(t.naiveBuffers)
                    .arg(t.plannedBuffers)
                    .arg(t.inference.naiveBuffers)
                    .arg(t.inference.plannedBuffers);
    if (!r.recompute.feasible) s += "<br><font color='#b03020'>" + QString::fromStdString(r.recompute.message).toHtmlEscaped() + "</font>";
    else if (!r.recompute.keptByRule.empty())
        s += QString("<br>%1 activations kept by a rule (first: %2 — %3)")
                 .arg(r.recompute.keptByRule.size())
                 .arg(QString::fromStdString(r.recompute.keptByRule[0].value),
                      QString::fromStdString(r.recompute.keptByRule[0].detail).toHtmlEscaped());
    return s;
}

}  // namespace passlens::ui
