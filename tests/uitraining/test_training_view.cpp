// Training graphs in the app (offscreen): building the training graph of the lecture's f runs the
// autodiff pass in the stepper, its step adds every backward node, later steps draw backward and
// loss nodes in their own styles, and selecting a forward node highlights exactly its gradient
// nodes and the edges of the tensors they saved.
#include <QDir>
#include <QSignalSpy>
#include <QtTest>

#include "MainWindow.h"
#include "autodiff/Autodiff.h"
#include "graph/GraphView.h"
#include "stepper/StepperPanel.h"
#include "training/TrainingController.h"

using namespace passlens;
using passlens::ui::MainWindow;
using passlens::ui::TrainingController;

namespace {

bool openAndWait(MainWindow& w, const char* id) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    w.openExample(id);
    return ready.count() > 0 || ready.wait(20000);
}

bool buildAndWait(MainWindow& w, const autodiff::AutodiffOptions& o) {
    auto* training = w.findChild<TrainingController*>("trainingController");
    if (!training) return false;
    QSignalSpy finished(w.stepper(), &ui::StepperPanel::runFinished);
    training->buildTrainingGraph(o);
    return finished.count() > 0 || finished.wait(30000);
}

bool showRowAndWait(MainWindow& w, int row) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    w.stepper()->setCurrentRow(row);
    return ready.count() > 0 || ready.wait(20000);
}

}  // namespace

class TrainingViewTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(PASSLENS_SCREENSHOT_DIR); }

    void menuHasBuildTrainingGraph() {
        MainWindow w;
        QVERIFY(w.findChild<QAction*>("buildTrainingGraph"));
    }

    void autodiffStepAddsEveryBackwardNodeWithProvenance() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "autodiff"));
        QVERIFY(buildAndWait(w, {"none", "", {"x1", "x2"}}));
        auto run = w.stepper()->lastRun();
        QVERIFY(run && run->result);
        QCOMPARE(run->rowCount(), 6);  // input, autodiff, 4 basic passes
        const auto* step = run->stepAt(1);
        QCOMPARE(QString::fromStdString(step->result.name), QString("autodiff"));
        size_t backward = 0;
        const auto& g = run->modelAt(1)->graph;
        for (ir::NodeId n : g.nodeOrder())
            backward += autodiff::provenanceOf(g.node(n)).role == autodiff::Role::Backward;
        QCOMPARE(backward, size_t(9));
        // Every entry adds something, except the one that sets the new output list.
        int outputLists = 0;
        for (const auto& c : step->result.changes) {
            if (c.kind == passes::ChangeKind::Modified && c.nodeNames == std::vector<std::string>{"graph outputs"}) {
                ++outputLists;
                continue;
            }
            QCOMPARE(int(c.kind), int(passes::ChangeKind::Added));
        }
        QCOMPARE(outputLists, 1);
        // Row 1: the diff marks the new nodes as added.
        QVERIFY(showRowAndWait(w, 1));
        QCOMPARE(int(w.shownDiff().added.size()), 10);  // 9 backward + 1 loss
        // The last row (after the cleanup) draws backward and loss nodes in their role styles.
        QVERIFY(showRowAndWait(w, 5));
        auto* training = w.findChild<TrainingController*>("trainingController");
        const auto& last = run->modelAt(5)->graph;
        int roleNodes = 0;
        for (ir::NodeId n : last.nodeOrder()) roleNodes += autodiff::provenanceOf(last.node(n)).role != autodiff::Role::Forward;
        QVERIFY(roleNodes > 0);
        QCOMPARE(training->styledRoleNodes(), roleNodes);
        // Selecting v3 (sin x2) highlights its gradient nodes (the cleanup folded v2's ×1 away).
        const ir::NodeId v2 = last.findNode("v3").value_or(ir::kNone);
        QVERIFY(v2 != ir::kNone);
        QVERIFY(w.graphView()->selectNode(v2));
        QCoreApplication::processEvents();
        int expected = 0;
        for (ir::NodeId n : last.nodeOrder()) expected += autodiff::provenanceOf(last.node(n)).forwardNode == "v3";
        QCOMPARE(training->highlightedGradientNodes(), expected);
        QVERIFY(expected >= 1);
        w.graphView()->showReadableOverview();
        QCoreApplication::processEvents();
        const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/training_graph.png";
        QVERIFY(w.grab().save(path));
    }

    void showValuesReadsTheAdjointTableOffTheGraph() {
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "autodiff"));
        QVERIFY(buildAndWait(w, {"none", "", {"x1", "x2"}}));
        QVERIFY(showRowAndWait(w, 1));  // the raw backward graph: every adjoint is a node
        auto* training = w.findChild<TrainingController*>("trainingController");
        QSignalSpy shown(training, &TrainingController::valuesShown);
        training->showValues({{"x1", {2.f}}, {"x2", {5.f}}});
        QVERIFY(shown.count() > 0 || shown.wait(20000));
        const auto& g = w.shownModel()->graph;
        auto producerOf = [&](const char* v) { return g.value(*g.findValue(v)).producer; };
        QCOMPARE(training->valueLabel(producerOf("x1_grad")), QString("= 5.5"));
        QCOMPARE(training->valueLabel(producerOf("x2_grad")), QString("= 1.716"));
        QCOMPARE(training->valueLabel(producerOf("v2_out")), QString("= 10"));
        QCOMPARE(training->valueLabel(producerOf("v3_out_grad")), QString("= -1"));
        QCOMPARE(w.graphView()->nodeStyle(producerOf("x1_grad"))->badge, QString("= 5.5"));  // the diff colour keeps its fill
        // Leaving the step drops the labels of the other snapshot.
        QVERIFY(showRowAndWait(w, 0));
        QCOMPARE(training->labelledNodes(), 0);
        QVERIFY(showRowAndWait(w, 1));
        QVERIFY(shown.count() > 0);
        training->showValues({{"x1", {2.f}}, {"x2", {5.f}}});
        QVERIFY(shown.wait(20000));
        w.graphView()->showReadableOverview();
        QCoreApplication::processEvents();
        QVERIFY(w.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/autodiff_values.png"));
    }

    void mlpTrainingExampleShowsRolesWithoutARun() {
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "mlp_training"));
        auto* training = w.findChild<TrainingController*>("trainingController");
        QVERIFY(training->styledRoleNodes() > 20);
        const auto& g = w.model()->graph;
        const ir::NodeId fc2 = g.findNode("fc2").value_or(ir::kNone);
        QVERIFY(w.graphView()->selectNode(fc2));
        QCoreApplication::processEvents();
        QVERIFY(training->highlightedGradientNodes() >= 2);
        QVERIFY(training->highlightedSavedEdges() >= 1);  // relu1_out → the weight-gradient MatMul
        w.graphView()->showReadableOverview();
        QCoreApplication::processEvents();
        QVERIFY(w.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/mlp_training.png"));
    }
};

QTEST_MAIN(TrainingViewTest)
#include "test_training_view.moc"
