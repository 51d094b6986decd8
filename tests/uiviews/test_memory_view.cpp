// The memory view on the offscreen platform: the buffer table passes Qt's model tester, the arena
// chart draws one rectangle per planned buffer (teaching example and PP-OCRv4 rec), clicking a
// rectangle's center emits that buffer's value and its producer/consumers, exports write PNG/SVG,
// cancel drops a result, and a 1920×1080 screenshot compares two planners side by side.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "ScreenshotContent.h"
#include <algorithm>

#include "examples/Examples.h"
#include "memory/BufferTableModel.h"
#include "memory/MemoryChartWidget.h"
#include "memory/MemoryPlan.h"
#include "memory/MemoryView.h"
#include "onnx/Import.h"
#include "onnx/ShapeInference.h"
#include "passes/PassManager.h"
#include "schedule/GraphSchedule.h"

using namespace passlens;
using passlens::ui::BufferTableModel;
using passlens::ui::MemoryChartWidget;
using passlens::ui::MemoryView;

namespace {

std::shared_ptr<const ir::Model> example(const char* id) {
    const auto* ex = examples::find(id);
    if (!ex) return nullptr;
    return std::make_shared<const ir::Model>(ex->build());
}

std::shared_ptr<const ir::Model> ocrRec() {
    onnxio::ImportOptions o;
    o.pinnedDims = {{"p2o.DynamicDimension.0", 1}, {"p2o.DynamicDimension.1", 320}};
    return std::make_shared<const ir::Model>(
        onnxio::importModelFile(std::string(PASSLENS_MODELS_DIR) + "/ch_PP-OCRv4_rec_infer.onnx", o));
}

bool showPlan(MemoryView& view, std::shared_ptr<const ir::Model> m, const QString& title, const QString& primary,
              const QString& compare) {
    QSignalSpy ready(&view, &MemoryView::planReady);
    view.setPlanners(primary, compare);
    view.setGraph(m, &m->graph, title);
    return ready.count() > 0 || ready.wait(30000);
}

}  // namespace

class MemoryViewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(PASSLENS_SCREENSHOT_DIR); }

    void twentyThousandTensorsPaintAFewItemsPerPixel() {
        // The generated 24k-node transformer, pinned and through the basic passes (its shape
        // chains folded) so every tensor has a size: 16k planned buffers over 16k steps on charts
        // a few hundred pixels wide.
        onnxio::ImportOptions o;
        o.pinnedDims = {{"batch", 1}, {"seq", 16}};
        ir::Model imported = onnxio::importModelFile(std::string(PASSLENS_GEN_MODELS_DIR) + "/bert_l320_scoped.onnx", o);
        passes::PassManager pm;
        pm.addLevel(passes::Level::Basic);
        passes::PipelineOptions po;
        po.keepSnapshots = false;
        pm.run(imported, po);
        auto m = std::make_shared<const ir::Model>(std::move(imported));
        MemoryView view;
        view.resize(1400, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showPlan(view, m, "bert_l320_scoped", "best", "share"));
        for (auto* chart : view.findChildren<MemoryChartWidget*>()) {
            if (!chart->isVisible() || chart->drawnItemCount() == 0) continue;
            const int all = chart->drawnItemCount(), painted = chart->paintedItemCount();
            // Painted items are bounded by the chart's pixels (a few per pixel column for the
            // curve, pixel-row runs for the bars), not by the tensors.
            const QString what = QString("%1: %2 painted of %3").arg(chart->objectName()).arg(painted).arg(all);
            QVERIFY2(painted < all, qPrintable(what));
            if (chart->kind() == MemoryChartWidget::Kind::LiveBytes) QVERIFY2(painted <= 4 * chart->width(), qPrintable(what));
            else QVERIFY2(painted <= chart->width() * chart->height() / 8, qPrintable(what));
            QElapsedTimer t;
            t.start();
            QImage img;
            for (int i = 0; i < 5; ++i) img = chart->grab().toImage();
            qInfo() << chart->objectName() << all << "items," << painted << "painted; repaint" << t.elapsed() / 5.0 << "ms";
            // Drawn, not blank: several colors.
            QSet<QRgb> colors;
            for (int y = 0; y < img.height(); y += 7)
                for (int x = 0; x < img.width(); x += 7) colors.insert(img.pixel(x, y));
            QVERIFY2(colors.size() > 3, qPrintable(chart->objectName()));
        }
        view.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/memory-view-24k.png");
    }

    void bufferTableModelPassesModelTester() {
        auto m = example("conv_bn_relu");
        QVERIFY(m);
        BufferTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        auto plan = std::make_shared<const memory::MemoryPlan>(memory::planMemory(*m, m->graph, {"share"}));
        model.setPlan(plan);
        QCOMPARE(model.rowCount(), static_cast<int>(plan->buffers.size()));
        QCOMPARE(model.columnCount(), static_cast<int>(BufferTableModel::ColumnCount));
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto& b = plan->buffers[r];
            QCOMPARE(model.data(model.index(r, BufferTableModel::Bytes), Qt::UserRole).toLongLong(), b.bytes);
            QCOMPARE(model.data(model.index(r, BufferTableModel::Offset), Qt::UserRole).toLongLong(), b.offset);
            QCOMPARE(model.data(model.index(r, BufferTableModel::First), Qt::UserRole).toInt(), b.first);
            QCOMPARE(model.data(model.index(r, BufferTableModel::Last), Qt::UserRole).toInt(), b.last);
            QVERIFY(model.data(model.index(r, BufferTableModel::Value)).toString().size() > 0);
        }
        auto rec = ocrRec();
        model.setPlan(std::make_shared<const memory::MemoryPlan>(memory::planMemory(*rec, rec->graph, {"greedy-size"})));
        QVERIFY(model.rowCount() > 100);
        model.setPlan(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void exampleDrawsOneRectanglePerBuffer() {
        auto m = example("conv_bn_relu");
        MemoryView view;
        view.resize(1400, 900);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showPlan(view, m, "conv_bn_relu", "naive", ""));
        auto expected = memory::planMemory(*m, m->graph, {"naive"});
        const auto* shown = view.snapshot().primary.get();
        QVERIFY(shown);
        QCOMPARE(shown->arenaBytes, expected.arenaBytes);
        QVERIFY(expected.buffers.size() > 0);
        QCOMPARE(view.arenaChart(0)->drawnItemCount(), static_cast<int>(expected.buffers.size()));
        QCOMPARE(view.lifetimeChart()->drawnItemCount(), static_cast<int>(expected.lifetimes.size()));
        QCOMPARE(view.bufferModel()->rowCount(), static_cast<int>(expected.buffers.size()));
        QVERIFY(!view.arenaChart(1)->isVisible());  // no comparison asked for
        QVERIFY(view.totalsText().contains("lower bound"));
    }

    void realModelDrawsOneRectanglePerBufferForBothPlanners() {
        auto m = ocrRec();
        MemoryView view;
        view.resize(1600, 1000);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showPlan(view, m, "PP-OCRv4 rec", "share", "greedy-size"));
        const auto& s = view.snapshot();
        QVERIFY(s.primary && s.compare);
        QCOMPARE(QString::fromStdString(s.primary->planner), QString("share"));
        QCOMPARE(QString::fromStdString(s.compare->planner), QString("greedy-size"));
        QVERIFY(s.primary->buffers.size() > 100);
        QCOMPARE(view.arenaChart(0)->drawnItemCount(), static_cast<int>(s.primary->buffers.size()));
        QCOMPARE(view.arenaChart(1)->drawnItemCount(), static_cast<int>(s.compare->buffers.size()));
        QVERIFY(view.arenaChart(1)->isVisible());
        // The comparison is the same lifetimes placed by the other planner.
        auto direct = memory::planMemory(*m, m->graph, {"greedy-size"});
        QCOMPARE(s.compare->arenaBytes, direct.arenaBytes);
        QCOMPARE(s.compare->buffers.size(), direct.buffers.size());
        QVERIFY(!memory::validatePlan(s.compare->lifetimes, s.compare->buffers, s.compare->arenaBytes));
    }

    void clickingABufferEmitsItsValueAndNodes() {
        for (const char* which : {"example", "rec"}) {
            auto m = std::string(which) == "rec" ? ocrRec() : example("conv_bn_relu");
            MemoryView view;
            view.resize(1600, 1000);
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            QVERIFY(showPlan(view, m, which, "greedy-size", ""));
            MemoryChartWidget* chart = view.arenaChart(0);
            const auto& plan = *view.snapshot().primary;
            QSignalSpy values(&view, &MemoryView::valueClicked);
            QSignalSpy nodes(&view, &MemoryView::nodesRequested);
            int clicked = 0, named = 0;
            for (const auto& b : plan.buffers) named += b.value != ir::kNone;
            for (int i = 0; i < static_cast<int>(plan.buffers.size()) && clicked < 40; ++i) {
                const auto& b = plan.buffers[i];
                if (b.value == ir::kNone) continue;
                QPoint c = chart->itemCenter(i).toPoint();
                if (chart->itemAt(c) != i) continue;  // sub-pixel buffers hide under neighbours
                values.clear();
                nodes.clear();
                QTest::mouseClick(chart, Qt::LeftButton, {}, c);
                QCOMPARE(values.count(), 1);
                QCOMPARE(values.at(0).at(0).value<ir::ValueId>(), b.value);
                QCOMPARE(nodes.count(), 1);
                auto ids = nodes.at(0).at(0).value<std::vector<ir::NodeId>>();
                const auto& v = m->graph.value(b.value);
                QVERIFY(!ids.empty());
                QCOMPARE(ids.front(), v.producer);
                for (ir::NodeId c2 : v.consumers) QVERIFY(std::find(ids.begin(), ids.end(), c2) != ids.end());
                QVERIFY(chart->describeAt(c).contains(QString::fromStdString(b.name).toHtmlEscaped()));
                ++clicked;
            }
            // Every buffer of the small example is clickable; on the real model at least 40 are.
            QVERIFY2(named > 0, which);
            QCOMPARE(clicked, std::min(named, 40));
            // Empty space emits nothing.
            values.clear();
            QTest::mouseClick(chart, Qt::LeftButton, {}, QPoint(2, 2));
            QCOMPARE(values.count(), 0);
        }
    }

    void exportsPngAndSvg() {
        auto m = example("conv_bn_relu");
        MemoryView view;
        view.resize(1200, 800);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showPlan(view, m, "conv_bn_relu", "share", ""));
        QTemporaryDir dir;
        for (MemoryChartWidget* chart : {view.lifetimeChart(), view.arenaChart(0), view.liveBytesChart(0)}) {
            QString png = dir.filePath(chart->objectName() + ".png");
            QString svg = dir.filePath(chart->objectName() + ".svg");
            QVERIFY(chart->exportPng(png, QSize(900, 400)));
            QVERIFY(chart->exportSvg(svg, QSize(900, 400)));
            QImage image(png);
            QCOMPARE(image.size(), QSize(900, 400));
            QFile f(svg);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QByteArray text = f.readAll();
            QVERIFY(text.contains("<svg"));
            QVERIFY(text.contains("schedule step"));  // axis text is real text in the SVG
        }
    }

    void cancelDropsTheRunningResult() {
        auto m = ocrRec();
        MemoryView view;
        QSignalSpy ready(&view, &MemoryView::planReady);
        view.setGraph(m, &m->graph, "rec");
        view.cancelPlanning();
        QTRY_VERIFY_WITH_TIMEOUT(!view.isPlanning(), 30000);
        QTest::qWait(50);
        QCOMPARE(ready.count(), 0);
        QVERIFY(!view.snapshot().primary);
        view.setPlanners("share", "");  // usable again
        QVERIFY(ready.wait(30000));
        QVERIFY(view.snapshot().primary);
    }

    void scheduleBoxPlansOnTheChosenSchedulersOrder() {
        // The NAS-cells net of docs/scheduling.md: the best schedule's lifetimes and peak, not the model order's.
        auto m = std::make_shared<const ir::Model>(onnxio::importModelFile(PASSLENS_NAS_CELLS_MODEL));
        MemoryView view;
        QVERIFY(showPlan(view, m, "nas_cells", "best", ""));
        const int64_t modelOrderBound = view.snapshot().primary->lowerBoundBytes;
        auto* box = view.findChild<QComboBox*>("scheduleBox");
        QVERIFY(box);
        const int best = box->findData(QString("best"));
        QVERIFY(best >= 0);
        QSignalSpy ready(&view, &MemoryView::planReady);
        box->setCurrentIndex(best);
        QVERIFY(ready.wait(30000));
        const auto problem = schedule::buildProblem(*m, m->graph);
        const auto run = schedule::scheduleGraph(*m, m->graph, problem, "best");
        const auto* shown = view.snapshot().primary.get();
        QVERIFY(shown);
        QCOMPARE(shown->scheduleNames.size(), run.schedule.order.size());
        for (size_t i = 0; i < run.schedule.order.size(); ++i)
            QCOMPARE(shown->scheduleNames[i], m->graph.node(run.schedule.order[i]).displayName());
        QCOMPARE(shown->lowerBoundBytes, run.peakLiveBytes);
        QVERIFY(shown->lowerBoundBytes < modelOrderBound);
        QCOMPARE(view.lifetimeChart()->drawnItemCount(), static_cast<int>(shown->lifetimes.size()));
    }

    /// A symbolic input dim nobody set is planned at 1, as `passlens-cli memplan` does, so every
    /// value of the ViT export is counted (the attention tensors included) and the view says so;
    /// with the dim pinned nothing is assumed.
    void unsetSymbolicDimsArePlannedAtOne() {
        const auto m = onnxio::importModelFile(std::string(PASSLENS_FIXTURES_DIR) + "/vit_tiny_dynamic.onnx");
        const auto s = ui::planSnapshot(m, m.graph, "best", "", "model");
        QVERIFY2(s.primary, qPrintable(s.error));
        QCOMPARE(s.assumedDims, QStringList{"batch=1"});
        QVERIFY2(s.primary->unknownSizeValues.empty(), qPrintable(QString::number(s.primary->unknownSizeValues.size())));
        auto pinned = m;
        onnxio::pinDims(pinned, {{"batch", 2}});
        onnxio::inferShapes(pinned);
        const auto p = ui::planSnapshot(pinned, pinned.graph, "best", "", "model");
        QVERIFY(p.primary && p.assumedDims.isEmpty());
        QVERIFY(p.primary->arenaBytes > s.primary->arenaBytes);  // twice the batch, more bytes
    }

    void unknownPlannerIsAnErrorNotACrash() {
        auto m = example("conv_bn_relu");
        auto s = ui::planSnapshot(*m, m->graph, "bogus", "", "model");
        QVERIFY(!s.primary);
        QVERIFY(s.error.contains("unknown planner"));
    }

    void screenshotTwoPlannersSideBySide() {
        auto m = ocrRec();
        MemoryView view;
        view.resize(1920, 1080);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        QVERIFY(showPlan(view, m, "PP-OCRv4 rec (1×3×48×320)", "share", "greedy-size"));
        QVERIFY(view.totalsText().contains("arena (share)"));
        QVERIFY(view.totalsText().contains("arena (greedy-size)"));
        QTest::qWait(100);  // let the layout settle after the new totals text
        QImage shot = view.grab().toImage();
        QCOMPARE(shot.size(), QSize(1920, 1080));
        PASSLENS_VERIFY_DRAWN(shot);
        QString full = QString(PASSLENS_SCREENSHOT_DIR) + "/memory-view-1920x1080.png";
        QString small = QString(PASSLENS_SCREENSHOT_DIR) + "/memory-view.png";
        QVERIFY(shot.save(full));
        QVERIFY(shot.scaled(1280, 720, Qt::KeepAspectRatio, Qt::SmoothTransformation).save(small));
    }
};

QTEST_MAIN(MemoryViewTest)
#include "test_memory_view.moc"
