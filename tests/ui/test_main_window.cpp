// The desktop app end to end on the offscreen platform: examples and real models draw one box per
// node, find selects and centers, bad files raise the error dialog and leave the app usable, and
// screenshots of the main window are written for people to look at.
#include <QDir>
#include <QFile>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "ScreenshotContent.h"

#include "MainWindow.h"
#include "examples/Examples.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "PropertiesPanel.h"
#include "examples/Builder.h"
#include "ir/Graph.h"

using namespace passlens;
using passlens::ui::MainWindow;

namespace {

const QStringList kRealModels = {"ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx",
                                 "ch_ppocr_mobile_v2.0_cls_infer.onnx", "silero_vad_legacy.onnx",
                                 "silero_vad_v5.onnx"};

QString realModel(const QString& name) { return QString(PASSLENS_MODELS_DIR) + "/" + name; }

/// Operator boxes the view should draw: every node except Constant nodes folded into consumers.
int expectedBoxes(const ir::Graph& g, bool fold) {
    int n = 0;
    for (ir::NodeId id : g.nodeOrder()) {
        const auto& node = g.node(id);
        bool foldable = node.opType == "Constant" && node.inputs.empty() && node.outputs.size() == 1 &&
                        !g.value(node.outputs[0]).isGraphOutput && !g.value(node.outputs[0]).consumers.empty();
        if (!(fold && foldable)) ++n;
    }
    return n;
}

bool waitForLayout(MainWindow& w, QSignalSpy& spy) {
    if (spy.count() > 0) return true;
    return spy.wait(60000);
}

QMessageBox* openErrorDialog(MainWindow& w) {
    for (auto* box : w.findChildren<QMessageBox*>("errorDialog"))
        if (box->isVisible()) return box;
    return nullptr;
}

}  // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();  // start from defaults: constants folded
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
    }

    void everyExampleDrawsOneBoxPerNode() {
        for (const auto& ex : examples::all()) {
            for (bool fold : {true, false}) {
                MainWindow w;
                w.setFoldConstants(fold);
                QSignalSpy spy(&w, &MainWindow::layoutReady);
                w.openExample(QString::fromStdString(ex.id));
                QVERIFY2(waitForLayout(w, spy), ex.id.c_str());
                QCOMPARE(w.graphView()->operatorItemCount(), expectedBoxes(w.model()->graph, fold));
                QVERIFY(w.graphView()->operatorItemCount() > 0);
            }
        }
    }

    void foldingHidesConstantNodesAndInitializerBoxes() {
        // conv_bn_relu has 7 initializers: unfolded they are separate boxes; folded they are lines.
        MainWindow w;
        w.setFoldConstants(true);
        QSignalSpy spy(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitForLayout(w, spy));
        const size_t folded = w.graphView()->snapshot()->display.nodes.size();
        w.setFoldConstants(false);
        QVERIFY(spy.wait(30000));
        const size_t unfolded = w.graphView()->snapshot()->display.nodes.size();
        QCOMPARE(unfolded, folded + w.model()->graph.initializerOrder().size());
    }

    void everyRealModelDrawsOneBoxPerNode() {
        for (const QString& name : kRealModels) {
            if (!QFile::exists(realModel(name))) QFAIL(qPrintable("missing model " + realModel(name)));
            MainWindow w;
            w.setFoldConstants(true);
            QSignalSpy spy(&w, &MainWindow::layoutReady);
            QVERIFY(w.openFile(realModel(name)));
            QVERIFY2(waitForLayout(w, spy), qPrintable(name));
            if (w.graphView()->snapshot()->hierarchy()) {  // large: drawn by groups; open them all
                QSignalSpy opened(&w, &MainWindow::expansionShown);
                w.expandAllGroups();
                QVERIFY2(opened.count() > 0 || opened.wait(120000), qPrintable(name));
                QCOMPARE(w.graphView()->groupItemCount(), 0);
            }
            QCOMPARE(w.graphView()->operatorItemCount(), expectedBoxes(w.model()->graph, true));
        }
    }

    void findSelectsAndCentersTheNode() {
        MainWindow w;
        w.setFoldConstants(true);
        w.resize(1280, 800);
        w.show();
        QSignalSpy spy(&w, &MainWindow::layoutReady);
        QVERIFY(w.openFile(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx")));
        QVERIFY(waitForLayout(w, spy));
        const ir::Graph& g = w.model()->graph;
        // Pick a node deep in the graph by exact name: it must become selected and be in view.
        const ir::Node& target = g.node(g.nodeOrder()[g.nodeOrder().size() * 2 / 3]);
        QSignalSpy selected(w.graphView(), &ui::GraphView::nodeSelected);
        w.find(QString::fromStdString(target.name));
        QCOMPARE(w.graphView()->selectedNode(), target.id);
        QVERIFY(selected.count() >= 1);
        QCOMPARE(selected.last().at(0).value<ir::NodeId>(), target.id);
        auto* item = w.graphView()->itemForNode(target.id);
        QVERIFY(item);
        const QPoint center = w.graphView()->mapFromScene(item->sceneBoundingRect().center());
        QVERIFY(w.graphView()->viewport()->rect().contains(center));
        // Centered unless the drawing's edge stops the scroll (then the scroll bar sits at its limit).
        auto centeredOrAtLimit = [](int pos, int mid, QScrollBar* bar) {
            return std::abs(pos - mid) < 60 || bar->value() == bar->minimum() || bar->value() == bar->maximum();
        };
        QVERIFY(centeredOrAtLimit(center.x(), w.graphView()->viewport()->width() / 2, w.graphView()->horizontalScrollBar()));
        QVERIFY(centeredOrAtLimit(center.y(), w.graphView()->viewport()->height() / 2, w.graphView()->verticalScrollBar()));
        QVERIFY(w.graphView()->verticalScrollBar()->maximum() > 0);  // the view really scrolled there
        // By op type: next/previous walk through every Conv and wrap around.
        w.find("Conv");
        int convs = 0;
        for (ir::NodeId id : g.nodeOrder()) convs += g.node(id).opType == "Conv";
        QVERIFY(convs > 2);
        ir::NodeId first = w.graphView()->selectedNode();
        QCOMPARE(QString::fromStdString(g.node(first).opType), QString("Conv"));
        w.findNext();
        ir::NodeId second = w.graphView()->selectedNode();
        QVERIFY(second != first);
        w.findPrevious();
        QCOMPARE(w.graphView()->selectedNode(), first);
        w.find("no-such-node-anywhere");
        QVERIFY(w.graphView()->findNodes("no-such-node-anywhere").empty());
        // op:TYPE matches the op type exactly (any case), never a part of a name or type.
        QCOMPARE(int(w.graphView()->findNodes("op:Conv").size()), convs);
        QCOMPARE(int(w.graphView()->findNodes("op:conv").size()), convs);
        QVERIFY(w.graphView()->findNodes("op:onv").empty());
    }

    void badFilesRaiseTheErrorDialogAndTheAppStaysUsable() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString random = dir.filePath("random.onnx");
        {
            QFile f(random);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QByteArray bytes;
            quint32 x = 12345;
            for (int i = 0; i < 4096; ++i) { x = x * 1664525u + 1013904223u; bytes.append(char(x >> 24)); }
            f.write(bytes);
        }
        const QString truncated = dir.filePath("truncated.onnx");
        {
            QFile src(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
            QVERIFY(src.open(QIODevice::ReadOnly));
            QByteArray all = src.readAll();
            QFile f(truncated);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(all.left(all.size() / 3));
        }
        MainWindow w;
        w.setFoldConstants(true);
        w.show();
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitForLayout(w, ready));
        const auto before = w.model();
        for (const QString& bad : {random, truncated, dir.filePath("does-not-exist.onnx")}) {
            QSignalSpy errors(&w, &MainWindow::errorShown);
            QVERIFY(!w.openFile(bad));
            QCOMPARE(errors.count(), 1);
            QVERIFY(!errors.first().at(0).toString().isEmpty());
            QMessageBox* box = openErrorDialog(w);
            QVERIFY2(box, "no visible error dialog");
            QVERIFY(box->text().size() > 5);
            QCOMPARE(w.model(), before);  // the current model is kept
            box->close();
            QCoreApplication::processEvents();
        }
        ready.clear();
        QVERIFY(w.openFile(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx")));
        QVERIFY(waitForLayout(w, ready));
        QCOMPARE(w.graphView()->operatorItemCount(), expectedBoxes(w.model()->graph, true));
    }

    void exportWritesPngAndSvg() {
        MainWindow w;
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitForLayout(w, ready));
        QTemporaryDir dir;
        QVERIFY(w.exportImage(dir.filePath("g.png")));
        QVERIFY(w.exportImage(dir.filePath("g.svg")));
        QImage img(dir.filePath("g.png"));
        QVERIFY(img.width() > 100 && img.height() > 100);
        QFile svg(dir.filePath("g.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("Conv"));
    }

    // A Constant node's output shows its tensor like an initializer does (it has its own box
    // when constants are unfolded).
    void propertiesShowAConstantNodesTensor() {
        ir::GraphBuilder b("const_node", 17);
        auto x = b.input("x", ir::DataType::Float, {2});
        auto c = b.op("Constant", {}, {ir::Attribute::makeTensor("value", ir::makeTensorOf(ir::DataType::Float, {2}, std::vector<float>{0.25f, 4.f}))},
                      "scale");
        b.output(b.op("Mul", {x, c}, {}, "mul"));
        auto model = std::make_shared<const ir::Model>(b.finish());
        auto snap = std::make_shared<ui::GraphSnapshot>();
        snap->model = model;
        snap->graph = &model->graph;
        ui::PropertiesPanel panel;
        panel.showValue(snap, c);
        const QString text = panel.toPlainText();
        QVERIFY2(text.contains("Constant scale"), qPrintable(text));
        QVERIFY2(text.contains("0.25") && text.contains("4"), qPrintable(text));
    }

    void styleOverridesApplyByNodeId() {
        MainWindow w;
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.openExample("conv_bn_relu");
        QVERIFY(waitForLayout(w, ready));
        const ir::NodeId conv = *w.model()->graph.findNode("conv");
        ui::NodeStyle s;
        s.fill = QColor("#ffdddd");
        w.graphView()->setNodeStyle(conv, s);
        QVERIFY(w.graphView()->selectNode(conv));
        QCOMPARE(w.graphView()->selectedNode(), conv);
        QVERIFY(!w.graphView()->selectNode(ir::kNone));
    }

    void screenshots() {
        struct Shot { QString file; std::function<void(MainWindow&)> open; };
        const std::vector<Shot> shots = {
            {"example_conv_bn_relu.png", [](MainWindow& w) { w.openExample("conv_bn_relu"); }},
            {"example_transformer_block.png", [](MainWindow& w) { w.openExample("transformer_block"); }},
            {"real_ppocr_cls.png", [](MainWindow& w) { w.openFile(realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx")); }},
        };
        for (const auto& s : shots) {
            MainWindow w;
            w.setFoldConstants(true);
            w.resize(1920, 1080);
            w.show();
            QSignalSpy ready(&w, &MainWindow::layoutReady);
            s.open(w);
            QVERIFY(waitForLayout(w, ready));
            if (s.file.startsWith("real")) w.find("p2o.Conv.7");  // show a selected node's properties too
            else if (auto sel = w.graphView()->findNodes("Conv"); !sel.empty()) w.graphView()->selectNode(sel.front()), w.graphView()->showReadableOverview();
            QCoreApplication::processEvents();
            const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/" + s.file;
            QVERIFY(w.grab().save(path));
            QVERIFY(QImage(path).width() == 1920);
            PASSLENS_VERIFY_DRAWN(path);
        }
    }
};

QTEST_MAIN(MainWindowTest)
#include "test_main_window.moc"
