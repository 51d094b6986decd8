// The memory dock's Training tab (offscreen): the 16-layer MLP's training plan on one time axis
// with the phase boundary, its 15 saved-for-backward tensors highlighted with their backward
// readers on hover, and the strategy switch replanning on a worker (sqrt halves the peak, a budget
// is met), with the trade-off chart filled. Screenshot: training_memory_dock.png.
#include <QDir>
#include <QSignalSpy>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QtTest>

#include "ScreenshotContent.h"

#include "autodiff/Autodiff.h"
#include "examples/TrainingExamples.h"
#include "memory/MemoryView.h"
#include "memory/TrainingMemoryPanel.h"

using namespace passlens;
using passlens::ui::TrainingMemoryPanel;

namespace {

bool waitForPlan(TrainingMemoryPanel& p) {
    QSignalSpy ready(&p, &TrainingMemoryPanel::planReady);
    while (p.isPlanning() || ready.count() == 0)
        if (!ready.wait(60000)) return false;
    return true;
}

/// Shows the panel on the 16-layer MLP's training graph and waits for its first plan.
bool showMlp16(TrainingMemoryPanel& panel) {
    panel.resize(1400, 560);
    panel.show();
    if (!QTest::qWaitForWindowExposed(&panel)) return false;
    panel.setModel(std::make_shared<const ir::Model>(examples::mlp16Training()));
    return waitForPlan(panel);
}

}  // namespace

class TrainingMemoryPanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(PASSLENS_SCREENSHOT_DIR); }

    void timelineShowsPhasesSavedTensorsAndReaders() {
        TrainingMemoryPanel panel;
        QVERIFY(showMlp16(panel));
        const auto& r = panel.result();
        QVERIFY(r.error.isEmpty());
        auto* tl = panel.timeline();
        QCOMPARE(tl->rowCount(), static_cast<int>(r.plan->buffers.size()));
        QCOMPARE(tl->highlightedCount(), 15);  // relu1..relu15 outputs
        // The boundary sits between the last forward step and the first loss step.
        QVERIFY(tl->boundaryX() > 0 && tl->boundaryX() < tl->width());
        QCOMPARE(r.training->stepPhases[static_cast<size_t>(r.training->phaseBoundaryStep)], std::string("loss"));
        // Hovering a saved tensor lists exactly its backward readers.
        int savedRow = -1;
        for (int row = 0; row < tl->rowCount() && savedRow < 0; ++row)
            if (!r.training->buffers[static_cast<size_t>(tl->bufferOfRow(row))].savedFor.empty()) savedRow = row;
        QVERIFY(savedRow >= 0);
        const auto& phase = r.training->buffers[static_cast<size_t>(tl->bufferOfRow(savedRow))];
        const QString tip = tl->describeAt(tl->rowCenter(savedRow));
        QVERIFY2(tip.contains("saved for backward, read by:"), qPrintable(tip));
        for (const auto& reader : phase.savedFor) QVERIFY2(tip.contains(QString::fromStdString(reader)), qPrintable(tip));
        // A forward tensor nobody saved has no reader list.
        for (int row = 0; row < tl->rowCount(); ++row) {
            const auto& b = r.training->buffers[static_cast<size_t>(tl->bufferOfRow(row))];
            if (b.phase == "forward" && b.savedFor.empty()) {
                const QString t = tl->describeAt(tl->rowCenter(row));
                QVERIFY2(!t.isEmpty() && !t.contains("saved for backward"), qPrintable(t));
                break;
            }
        }
        // The trade-off chart: the Pareto curve and store-all, sqrt, all as references.
        const auto& points = panel.tradeoffChart()->points();
        QVERIFY(std::count_if(points.begin(), points.end(), [](const auto& q) { return q.onCurve; }) >= 2);
        for (const char* ref : {"store-all", "sqrt", "all"})
            QVERIFY2(std::any_of(points.begin(), points.end(), [&](const auto& q) { return q.label == ref; }), ref);
    }

    void strategySwitchReplansOffTheGuiThread() {
        TrainingMemoryPanel panel;
        QVERIFY(showMlp16(panel));
        const int64_t none = panel.result().plan->arenaBytes;
        panel.setStrategy("sqrt");
        QVERIFY(panel.isPlanning());  // the worker runs; the GUI thread is free meanwhile
        QVERIFY(waitForPlan(panel));
        const auto& s = panel.result();
        QCOMPARE(s.options.strategy, autodiff::RecomputeOptions::Strategy::Sqrt);
        QVERIFY2(s.plan->arenaBytes <= none * 6 / 10, qPrintable(panel.summaryText()));
        QVERIFY(s.recompute.extraFlops > 0);
        QVERIFY(s.training->recomputeBuffers.count > 0);
        QVERIFY(panel.summaryText().contains("forward passes"));
        const QImage shot = panel.grab().toImage();
        shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/training_memory_dock.png");
        PASSLENS_VERIFY_DRAWN(shot);

        panel.setStrategy("budget");
        QVERIFY(waitForPlan(panel));
        const int64_t budget = none * 3 / 4;
        panel.setBudget(budget);
        QVERIFY(waitForPlan(panel));
        const auto& b = panel.result();
        QCOMPARE(b.options.strategy, autodiff::RecomputeOptions::Strategy::Budget);
        QVERIFY(b.recompute.feasible);
        QVERIFY2(b.plan->arenaBytes <= b.options.budgetBytes, qPrintable(panel.summaryText()));
        QVERIFY(b.options.budgetBytes <= budget + none / 500);  // the slider's resolution
    }

    void clickingACurvePointPlansThatArenaAndShowsItsRecomputedNodes() {
        TrainingMemoryPanel panel;
        QVERIFY(showMlp16(panel));
        auto* chart = panel.tradeoffChart();
        // The curve's lowest-arena point: the most recomputation the curve offers.
        const auto& points = chart->points();
        int lowest = -1;
        for (size_t i = 0; i < points.size(); ++i)
            if (points[i].onCurve && (lowest < 0 || points[i].peakBytes < points[static_cast<size_t>(lowest)].peakBytes))
                lowest = static_cast<int>(i);
        QVERIFY(lowest >= 0);
        const int64_t target = points[static_cast<size_t>(lowest)].peakBytes;
        QVERIFY(target < panel.result().plan->arenaBytes);
        emit chart->pointClicked(lowest);
        QVERIFY(waitForPlan(panel));
        const auto& r = panel.result();
        QCOMPARE(r.options.strategy, autodiff::RecomputeOptions::Strategy::Budget);
        QVERIFY(r.recompute.feasible);
        QVERIFY2(r.plan->arenaBytes <= target + r.recompute.peakBefore / 500, qPrintable(panel.summaryText()));  // slider steps
        QVERIFY(!r.recompute.dropped.empty());
        // Show Recomputed selects the producers of exactly the recomputed activations.
        QSignalSpy requested(&panel, &TrainingMemoryPanel::nodesRequested);
        auto* button = panel.findChild<QPushButton*>("showRecomputed");
        QVERIFY(button && button->isEnabled());
        button->click();
        QCOMPARE(requested.count(), 1);
        const auto nodes = requested.at(0).at(0).value<std::vector<ir::NodeId>>();
        QCOMPARE(nodes.size(), r.recompute.dropped.size());
        QCOMPARE(nodes, panel.recomputedNodes());
    }

    void cancelDropsTheRunningResult() {
        TrainingMemoryPanel panel;
        QVERIFY(showMlp16(panel));
        panel.setStrategy("sqrt");
        QVERIFY(panel.isPlanning());
        panel.cancelPlanning();
        QTRY_VERIFY_WITH_TIMEOUT(!panel.isPlanning(), 60000);
        QTest::qWait(50);  // the finished handler has run
        QCOMPARE(panel.result().options.strategy, autodiff::RecomputeOptions::Strategy::None);
        QVERIFY(panel.findChild<QLabel*>("trainingSummary")->text().contains("cancelled"));
    }

    void memoryViewEnablesTheTabOnTrainingGraphsOnly() {
        ui::MemoryView view;
        auto tabs = view.findChild<QTabWidget*>();
        QVERIFY(tabs);
        const int tab = tabs->indexOf(view.trainingPanel());
        QVERIFY(tab >= 0);
        auto forward = std::make_shared<const ir::Model>(examples::mlpForward());
        view.setGraph(forward, &forward->graph);
        QVERIFY(!tabs->isTabEnabled(tab));
        auto train = std::make_shared<const ir::Model>(examples::mlpTraining());
        view.setGraph(train, &train->graph);
        QVERIFY(tabs->isTabEnabled(tab));
    }
};

QTEST_MAIN(TrainingMemoryPanelTest)
#include "test_training_memory_panel.moc"
