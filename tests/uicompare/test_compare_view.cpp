// File → Compare With… on the offscreen platform: PP-OCR cls against a copy with one weight
// changed and one Relu removed (exactly those two marked, yellow and red; a click on the list
// selects and centers both sides; Properties shows match reason and score; selection follows
// from A to B), a file that cannot be read, and ONNX Runtime's optimized cls (screenshots).
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "ScreenshotContent.h"

#include "MainWindow.h"
#include "PropertiesPanel.h"
#include "compare/CompareView.h"
#include "compare/DifferenceModel.h"
#include "core/ModelScramble.h"
#include "graph/GraphView.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "stepper/DiffStyle.h"

using namespace passlens;
using passlens::ui::CompareView;
using passlens::ui::DiffState;
using passlens::ui::MainWindow;

namespace {

const QString kCls = QString(PASSLENS_MODELS_DIR) + "/ch_ppocr_mobile_v2.0_cls_infer.onnx";

bool waitFor(QSignalSpy& spy, int ms = 120000) { return spy.count() > 0 || spy.wait(ms); }

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    return w.openFile(path) && waitFor(ready);
}

CompareView* compareAndWait(MainWindow& w, const QString& pathB) {
    CompareView* view = w.compareWith(pathB);
    if (!view) return nullptr;
    QSignalSpy ready(view, &CompareView::ready);
    return waitFor(ready) ? view : nullptr;
}

QColor outlineOf(ui::GraphView* v, ir::NodeId id) {
    const ui::NodeStyle* s = v->nodeStyle(id);
    return s ? s->outline : QColor();
}

/// The window and, for the docs, the compare tab alone.
void screenshot(MainWindow& w, CompareView* view, const QString& name) {
    w.resize(1920, 1080);
    QApplication::processEvents();
    QVERIFY(w.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/" + name + ".png"));
    QVERIFY(view->grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/" + name + "_tab.png"));
    PASSLENS_VERIFY_DRAWN(QString(PASSLENS_SCREENSHOT_DIR) + "/" + name + "_tab.png");
}

}  // namespace

class CompareViewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
        if (!QFile::exists(kCls)) QSKIP("real models not fetched");
    }

    void marksExactlyTheEditedNodesAndLinksBothSides() {
        ir::Model edited = onnxio::importModelFile(kCls.toStdString());
        const auto mut = test::removeOneReluAndChangeOneWeight(edited);
        QVERIFY(mut.has_value());
        QCOMPARE(mut->graphIndex, size_t(0));
        QTemporaryDir dir;
        const QString pathB = dir.filePath("cls_edited.onnx");
        onnxio::exportModelFile(edited, pathB.toStdString());

        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kCls));
        CompareView* view = compareAndWait(w, pathB);
        QVERIFY(view);
        const auto cmp = view->comparison();
        QCOMPARE(cmp->summary.changed, size_t(1));
        QCOMPARE(cmp->summary.onlyInA, size_t(1));
        QCOMPARE(cmp->summary.onlyInB, size_t(0));

        // Changed: yellow on both sides; the removed Relu: red in A; nothing else styled.
        // (PP-OCR keeps weights in Constant nodes, drawn folded into their reader: the reader is marked.)
        const auto& main = cmp->graphs.front();
        const ir::NodeId drawnA = view->drawnNode(true, mut->changedNode);
        const ir::NodeId drawnB = view->drawnNode(false, main.rowForA(mut->changedNode)->b);
        QVERIFY(drawnA != ir::kNone && drawnB != ir::kNone);
        QCOMPARE(outlineOf(view->viewA(), drawnA), ui::styleFor(DiffState::Changed).outline);
        QCOMPARE(outlineOf(view->viewB(), drawnB), ui::styleFor(DiffState::Changed).outline);
        QCOMPARE(outlineOf(view->viewA(), mut->removedRelu), ui::styleFor(DiffState::Removed).outline);
        QCOMPARE(view->viewA()->styledNodes().size(), size_t(2));
        QCOMPARE(view->viewB()->styledNodes().size(), size_t(1));

        // The list: two rows; a click selects and centers both sides and fills Properties.
        QCOMPARE(view->differenceModel()->rowCount(), 2);
        int changedRow = -1;
        for (int r = 0; r < 2; ++r)
            if (view->differenceModel()->entry(r).row->status == diff::NodeStatus::Changed) changedRow = r;
        QVERIFY(changedRow >= 0);
        view->activateDifference(changedRow);
        QCOMPARE(view->viewA()->selectedNode(), drawnA);
        QCOMPARE(view->viewB()->selectedNode(), drawnB);
        const QString props = w.propertiesPanel()->toPlainText();
        QVERIFY2(props.contains("matched to") && props.contains("score") && props.contains("max |Δ|"), qPrintable(props));

        // Selecting a same node in A selects its counterpart in B.
        const ir::NodeId first = w.model()->graph.nodeOrder().back();
        QVERIFY(view->viewA()->selectNode(first));
        QCOMPARE(view->viewB()->selectedNode(), main.rowForA(first)->b);
        QVERIFY(w.propertiesPanel()->toPlainText().contains("same"));
        view->activateDifference(changedRow);
        screenshot(w, view, "compare_cls_edited");
    }

    void unreadableFileIsAnErrorNotACrash() {
        MainWindow w;
        QVERIFY(openAndWait(w, kCls));
        CompareView* view = w.compareWith("/nonexistent/model.onnx");
        QVERIFY(view);
        QSignalSpy failed(view, &CompareView::failed);
        QVERIFY(waitFor(failed));
        QVERIFY(failed.first().at(0).toString().contains("model.onnx"));
        QVERIFY(!view->isBusy());
    }

    void onnxRuntimeOptimizedClsScreenshot() {
        QTemporaryDir dir;
        const QString out = dir.filePath("cls_ort_extended.onnx");
        const QString cmd = QString("%1 %2 %3 extended %4").arg(PASSLENS_ORT_SCRIPT, PASSLENS_ORT_WORK, kCls, out);
        const int rc = std::system(cmd.toLocal8Bit().constData());
        if (rc != 0) QSKIP("onnxruntime-node not available");
        MainWindow w;
        w.show();
        QVERIFY(openAndWait(w, kCls));
        CompareView* view = compareAndWait(w, out);
        QVERIFY(view);
        QVERIFY(view->comparison()->summary.onlyInA > 0);
        QVERIFY(view->summaryText().contains("removed"));
        view->activateDifference(0);
        screenshot(w, view, "compare_cls_ort");
    }
};

QTEST_MAIN(CompareViewTest)
#include "test_compare_view.moc"
