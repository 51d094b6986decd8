// The app on real PyTorch exports (tests/models, not the teaching examples), offscreen: the first
// view shows boxes of the model, not empty canvas; after a run (the default level, extended) and
// after each of the first steps the selection, or with nothing selected one of the step's changes,
// is on screen; Next Change walks the step's changes. First views are saved as screenshots.
#include <QAction>
#include <QDir>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>
#include <memory>
#include <set>

#include "ScreenshotContent.h"
#include "ExportWindow.h"

#include "MainWindow.h"
#include "graph/FirstView.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "passes/PassRegistry.h"
#include "stepper/PassTableModel.h"
#include "stepper/PipelineJob.h"
#include "stepper/StepperPanel.h"

using namespace passlens;
using passlens::ui::MainWindow;

using namespace passlens::test;


class ExportViewsTest : public QObject {
    Q_OBJECT
private slots:
    void init() { QSettings().clear(); }

    /// The first view at a smaller window (a laptop screen) starts at the inputs too.
    void firstViewOnASmallWindow_data() { exportRows(); }
    void firstViewOnASmallWindow() {
        QFETCH(QString, name);
        MainWindow w;
        w.resize(1280, 760);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, fixture(name)));
        QCoreApplication::processEvents();
        QVERIFY2(boxesOnScreen(*w.graphView()) > 0, qPrintable(where(w, "first view is empty canvas")));
        QVERIFY2(inputsOnScreen(*w.graphView()) > 0, qPrintable(where(w, "first view does not show the graph inputs")));
    }

    /// Nothing selected: the first view shows the model, a run keeps it on screen, each step
    /// brings one of its changes into view.
    void firstViewRunAndStepsShowTheModel_data() { exportRows(); }
    void firstViewRunAndStepsShowTheModel() {
        QFETCH(QString, name);
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture(name)));
        QCoreApplication::processEvents();
        ui::GraphView& v = *w->graphView();
        QVERIFY2(boxesOnScreen(v) > 0, qPrintable(where(*w, "first view is empty canvas")));
        QVERIFY2(inputsOnScreen(v) > 0, qPrintable(where(*w, "first view does not show the graph inputs")));
        // The window as a new user sees it, kept for people to look at.
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
        const QImage shot = w->grab().toImage();
        shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/export_first_view_" + name + ".png");
        PASSLENS_VERIFY_DRAWN(shot);

        // The default level is extended (the most that stays standard ONNX).
        QCOMPARE(w->stepper()->requestedPasses(), passes::PassRegistry::global().pipeline(passes::Level::Extended));
        QVERIFY(runAndWait(*w));
        QVERIFY2(boxesOnScreen(v) > 0, qPrintable(where(*w, "after Run")));
        const int rows = w->stepper()->tableModel()->rowCount();
        int withChanges = 0;
        for (int row = 1; row <= 3 && row < rows; ++row) {
            QVERIFY(showRow(*w, row));
            const QString when = QString("after step %1 (%2)").arg(row).arg(QString::fromStdString(w->stepper()->lastRun()->stepAt(row)->result.name));
            QVERIFY2(boxesOnScreen(v) > 0, qPrintable(where(*w, when + ": empty canvas")));
            w->grab().save(QString(PASSLENS_SCREENSHOT_DIR) + QString("/export_step%1_").arg(row) + name + ".png");
            if (!stepHasDrawnChanges(*w)) continue;
            ++withChanges;
            QVERIFY2(aChangeOnScreen(*w), qPrintable(where(*w, when + ": no change on screen")));
        }
        qInfo() << name << ":" << withChanges << "of the first steps changed the drawing";
    }

    /// A node selected before the run stays selected and on screen through the run and the steps
    /// while it exists; Find's match likewise.
    void selectionStaysOnScreen_data() { exportRows(); }
    void selectionStaysOnScreen() {
        QFETCH(QString, name);
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture(name)));
        ui::GraphView& v = *w->graphView();
        // A node deep in the model (the last operator drawn), found by name as a user would.
        ir::NodeId target = ir::kNone;
        const auto& g = w->model()->graph;
        for (ir::NodeId id : g.nodeOrder())
            if (v.itemForNode(id) && !g.node(id).name.empty()) target = id;
        QVERIFY(target != ir::kNone);
        w->find(QString::fromStdString(g.node(target).name));
        QCOMPARE(v.selectedNode(), target);
        QVERIFY2(onScreen(v, v.itemForNode(target)), qPrintable(where(*w, "after Find")));
        QVERIFY(runAndWait(*w));
        QCOMPARE(v.selectedNode(), target);
        QVERIFY2(onScreen(v, v.itemForNode(target)), qPrintable(where(*w, "after Run")));
        const int rows = w->stepper()->tableModel()->rowCount();
        for (int row = 1; row <= 3 && row < rows; ++row) {
            QVERIFY(showRow(*w, row));
            const QString when = QString("after step %1").arg(row);
            if (v.itemForNode(target)) {
                QCOMPARE(v.selectedNode(), target);
                QVERIFY2(onScreen(v, v.itemForNode(target)), qPrintable(where(*w, when + ": selection off screen")));
            } else {
                // The pass removed or hid it: a change takes its place on screen.
                QVERIFY2(boxesOnScreen(v) > 0, qPrintable(where(*w, when + ": empty canvas")));
                if (stepHasDrawnChanges(*w)) QVERIFY2(aChangeOnScreen(*w), qPrintable(where(*w, when)));
            }
        }
    }

    /// Passes ▸ Next Change selects the step's changed nodes one after another, each on screen,
    /// and comes back around.
    void nextChangeWalksTheStepsChanges() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("vit_tiny_dynamic")));
        QVERIFY(runAndWait(*w));
        ui::GraphView& v = *w->graphView();
        // The first step whose added and changed boxes number two or more.
        int row = 1;
        const int rows = w->stepper()->tableModel()->rowCount();
        auto drawnChanges = [&] {
            std::set<ir::NodeId> out;
            for (const auto* ids : {&w->shownDiff().added, &w->shownDiff().changed})
                for (ir::NodeId id : *ids)
                    if (v.itemForNode(id)) out.insert(id);
            return out;
        };
        for (; row < rows; ++row) {
            QVERIFY(showRow(*w, row));
            if (drawnChanges().size() >= 2) break;
        }
        QVERIFY2(row < rows, "no step changed two drawn nodes");
        QAction* next = w->findChild<QAction*>("nextChangeAction");
        QVERIFY(next);
        QCOMPARE(next->shortcut(), QKeySequence(Qt::Key_F8));
        const auto changes = drawnChanges();
        const size_t spots = changes.size() + size_t(v.ghostCount());
        std::set<ir::NodeId> visited;
        for (size_t i = 0; i < spots; ++i) {
            next->trigger();
            const ir::NodeId sel = v.selectedNode();
            if (sel == ir::kNone) continue;  // a removed node's ghost, shown but not selectable
            QVERIFY2(changes.count(sel), "Next Change selected a node the step did not change");
            QVERIFY(onScreen(v, v.itemForNode(sel)));
            visited.insert(sel);
        }
        QCOMPARE(visited, changes);
        next->trigger();  // around again: the first one
        QVERIFY(v.selectedNode() == ir::kNone || changes.count(v.selectedNode()));
    }

    /// The first view's geometry alone: a drawing wider and taller than the view whose middle is
    /// empty (inputs on the left, a wide tail below) is shown at its inputs, readable.
    void firstViewGeometryStartsAtTheInputs() {
        layout::DisplayGraph dg;
        layout::LayoutResult lr;
        auto box = [&](layout::DisplayNode::Kind kind, double x, double y) {
            layout::DisplayNode n;
            n.kind = kind;
            n.key = uint32_t(dg.nodes.size() + 1);
            dg.nodes.push_back(n);
            layout::BoxPlacement p;
            p.rect = {x, y, 120, 40};
            lr.boxes.push_back(p);
        };
        box(layout::DisplayNode::Kind::Input, 0, 0);
        for (int i = 1; i < 60; ++i) box(layout::DisplayNode::Kind::Op, 0, 80.0 * i);
        box(layout::DisplayNode::Kind::Op, 4000, 4000);  // a far branch widens the drawing
        lr.bounds = {0, 0, 4120, 4800};
        const ui::FirstView first = ui::chooseFirstView(dg, lr, QSizeF(1000, 700));
        QVERIFY(!first.fitWhole);
        QVERIFY(first.scale >= ui::kReadableScale);
        const QSizeF visible = QSizeF(1000, 700) / first.scale;
        const QRectF shown(first.center - QPointF(visible.width() / 2, visible.height() / 2), visible);
        QVERIFY2(shown.contains(QRectF(0, 0, 120, 40)), "the input is not in the first view");
        // A small drawing is fitted whole.
        lr.bounds = {0, 0, 400, 300};
        QVERIFY(ui::chooseFirstView(dg, lr, QSizeF(1000, 700)).fitWhole);
    }
};

QTEST_MAIN(ExportViewsTest)
#include "test_export_views.moc"
