// The memory dock's Schedules tab (offscreen) on the NAS-cells net of docs/scheduling.md: exporter
// order against the best schedule with the any-order bound, the chart the CLI draws, and the
// tensors live at the best peak sent to the graph. Screenshot: schedules_tab.png.
#include <algorithm>

#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSvgWidget>
#include <QtTest>

#include "ScreenshotContent.h"

#include "memory/SchedulesPanel.h"
#include "onnx/Import.h"
#include "plot/Scale.h"

using namespace passlens;
using passlens::ui::SchedulesPanel;

namespace {

std::shared_ptr<const ir::Model> nasCells() {
    return std::make_shared<const ir::Model>(onnxio::importModelFile(PASSLENS_NAS_CELLS_MODEL));
}

bool waitReady(SchedulesPanel& p) {
    QSignalSpy ready(&p, &SchedulesPanel::ready);
    while (p.isBusy() || ready.count() == 0)
        if (!ready.wait(60000)) return false;
    return true;
}

/// Bytes of a float32 value with static dims (every value of this net).
int64_t floatBytes(const ir::Value& v) {
    int64_t n = 4;
    for (int64_t d : v.staticDims().value_or(std::vector<int64_t>{0})) n *= d;
    return n;
}

QString bytes(int64_t b) { return QString::fromStdString(plot::formatBytes(static_cast<double>(b))); }

}  // namespace

class SchedulesPanelTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(PASSLENS_SCREENSHOT_DIR); }

    void hiddenPanelDoesNotSchedule() {
        SchedulesPanel panel;
        panel.setModel(nasCells());
        QVERIFY(!panel.isBusy());
        QVERIFY(panel.result().svg.isEmpty());
    }

    void comparesExporterOrderWithTheBestScheduleAndTheBound() {
        SchedulesPanel panel;
        panel.resize(1200, 520);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const auto model = nasCells();
        panel.setModel(model);
        QVERIFY(waitReady(panel));
        const auto& r = panel.result();
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // docs/scheduling.md: the exporter's breadth-first order keeps four expansions live; the
        // best schedule runs one branch at a time, proven optimal by the search (above the bound).
        QVERIFY(r.bestPeak < r.exporterPeak);
        QVERIFY(r.bound <= r.bestPeak);
        const QString summary = panel.findChild<QLabel*>("schedulesSummary")->text();
        QVERIFY2(summary.contains(bytes(r.exporterPeak)) && summary.contains(bytes(r.bestPeak)) && summary.contains("optimal"),
                 qPrintable(summary));
        QVERIFY(r.svg.contains("exporter (peak") && r.svg.contains("any-order lower bound"));
        // The tensors live at the peak: at least the peak's bytes, each with its producer on the graph.
        int64_t liveBytes = 0;
        for (ir::ValueId v : r.peakValues) liveBytes += floatBytes(model->graph.value(v));
        QVERIFY2(liveBytes >= r.bestPeak, qPrintable(QString("%1 < %2").arg(liveBytes).arg(r.bestPeak)));
        QVERIFY(!r.peakNodes.empty());
        QSignalSpy requested(&panel, &SchedulesPanel::nodesRequested);
        auto* button = panel.findChild<QPushButton*>("showPeakTensors");
        QVERIFY(button->isEnabled());
        button->click();
        QCOMPARE(requested.count(), 1);
        QCOMPARE(requested.at(0).at(0).value<std::vector<ir::NodeId>>(), r.peakNodes);
        // Stepping through the best order selects each step's node and names the peak step.
        QCOMPARE(r.bestOrder.size(), r.bestLiveBytes.size());
        const int peak = static_cast<int>(std::max_element(r.bestLiveBytes.begin(), r.bestLiveBytes.end()) - r.bestLiveBytes.begin());
        QCOMPARE(r.bestLiveBytes[static_cast<size_t>(peak)], r.bestPeak);
        panel.showStep(peak);
        QCOMPARE(requested.count(), 2);
        QCOMPARE(requested.at(1).at(0).value<std::vector<ir::NodeId>>(), std::vector<ir::NodeId>{r.bestOrder[static_cast<size_t>(peak)]});
        const QString step = panel.findChild<QLabel*>("scheduleStepLabel")->text();
        QVERIFY2(step.contains(QString::fromStdString(model->graph.node(r.bestOrder[static_cast<size_t>(peak)]).displayName())) &&
                     step.contains("(the peak)"),
                 qPrintable(step));
        panel.showStep(0);
        QVERIFY(!panel.findChild<QLabel*>("scheduleStepLabel")->text().contains("(the peak)") || r.bestLiveBytes[0] == r.bestPeak);
        const QImage shot = panel.grab().toImage();
        const QString why = test::whyNotDrawn(shot);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/schedules_tab.png");
    }
};

QTEST_MAIN(SchedulesPanelTest)
#include "test_schedules_panel.moc"
