// The main window on first open (no saved window state): the graph view gets most of the window,
// and the overlays (minimap, legend) never cover the selected box. Screenshot to the build folder.
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>

#include "ScreenshotContent.h"

#include "HierarchyModels.h"
#include "MainWindow.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"

using namespace passlens;
using passlens::ui::MainWindow;

namespace {

bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    if (!w.openFile(path)) return false;
    return ready.count() > 0 || ready.wait(120000);
}

QList<QAction*> allMenuActions(const QList<QAction*>& actions) {
    QList<QAction*> out;
    for (QAction* a : actions) {
        out << a;
        if (a->menu()) out << allMenuActions(a->menu()->actions());
    }
    return out;
}

double share(const QWidget& part, const QWidget& whole) {
    return double(part.width()) * part.height() / (double(whole.width()) * whole.height());
}

}  // namespace

class MainWindowLayoutTest : public QObject {
    Q_OBJECT
private slots:
    void init() { QSettings().clear(); }  // every test is a first start

    void savedDockLayoutComesBackOnlyFromTheSameVersion() {
        {
            MainWindow w;
            QVERIFY(!w.restoredWindowState());  // first start
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            w.close();  // saves geometry and dock layout
        }
        {
            MainWindow again;
            QVERIFY(again.restoredWindowState());
        }
        // A layout saved by a build with another dock layout (another version) is not restored.
        QMainWindow older;
        QSettings().setValue("window/state", older.saveState(MainWindow::kWindowStateVersion - 1));
        MainWindow w;
        QVERIFY(!w.restoredWindowState());
    }

    void deepBreadcrumbKeepsTheTopAndTheNodeEnd() {
        const QFont font;
        const QFontMetrics fm(font);
        QStringList path{"graph", "encoder", "layers 0-99", "layer.42", "attention", "self", "/encoder/layer.42/attention/self/MatMul_1"};
        const QString whole = path.join(" ▸ ");
        // Wide enough: the whole path.
        QCOMPARE(ui::elidePathMiddle(path, fm, fm.horizontalAdvance(whole) + 10), whole);
        // Narrower: the top, an ellipsis and the segments nearest the node that fit.
        const QString expected = "graph ▸ … ▸ attention ▸ self ▸ " + path.back();
        const QString cut = ui::elidePathMiddle(path, fm, fm.horizontalAdvance(expected) + 2);
        QCOMPARE(cut, expected);
        // Room for less than the node's own name: that name is shortened in its middle.
        const int tight = fm.horizontalAdvance("graph ▸ … ▸ ") + fm.horizontalAdvance(path.back()) / 2;
        const QString tiny = ui::elidePathMiddle(path, fm, tight);
        QVERIFY2(tiny.startsWith("graph ▸ … ▸ /enc") && tiny.count("…") == 2, qPrintable(tiny));
        QVERIFY2(fm.horizontalAdvance(tiny) <= tight, qPrintable(tiny));
        QVERIFY2(tiny.endsWith("MatMul_1"), qPrintable(tiny));
    }

    void graphGetsMostOfTheFirstWindow() {
        MainWindow w;
        w.resize(1440, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, QString(PASSLENS_GEN_MODELS_DIR) + "/bert_l24_scoped.onnx"));
        QTest::qWait(50);  // the first-start dock sizes apply after the first show
        const double graphShare = share(*w.graphView(), w);
        qInfo() << "graph view" << w.graphView()->size() << "of" << w.size() << "=" << graphShare;
        QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
        const QImage shot = w.grab().toImage();
        shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/main-window-first-open.png");
        PASSLENS_VERIFY_DRAWN(shot);
        QVERIFY2(graphShare >= 0.6, qPrintable(QString("graph view has %1 of the window").arg(graphShare)));
        // Every dock, hidden or not, can be shown from the menus (View ▸ Panels).
        const QList<QAction*> menuActions = allMenuActions(w.menuBar()->actions());
        for (QDockWidget* d : w.findChildren<QDockWidget*>())
            QVERIFY2(menuActions.contains(d->toggleViewAction()), qPrintable(d->objectName() + " has no menu entry"));
    }

    void overlaysNeverCoverTheSelectedNode() {
        MainWindow w;
        w.resize(1440, 900);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy ready(&w, &MainWindow::layoutReady);
        w.setModel(std::make_shared<ir::Model>(test::chainModel(120)), "chain");  // drawn whole (under 300 boxes), tall
        QVERIFY(ready.count() > 0 || ready.wait(60000));
        ui::GraphView* v = w.graphView();
        // Zoomed in, the drawing scrolls both ways: any box can be brought under a corner.
        v->resetTransform();
        v->scale(8, 8);
        QVERIFY2(v->minimapVisible(), "the drawing should not fit: the minimap shows");
        int checked = 0;
        // For each corner overlay: scroll a box under it, select it the way a click does (no
        // centering), and the overlay has moved off it.
        for (auto overlay : {&ui::GraphView::minimapGeometry, &ui::GraphView::legendGeometry}) {
            v->scene()->clearSelection();
            const QRect area = (v->*overlay)();
            QVERIFY(!area.isEmpty());
            // A box in the middle of the drawing (the scroll range can bring it anywhere).
            ui::NodeItem* box = nullptr;
            const QPointF middle = v->sceneRect().center();
            for (QGraphicsItem* it : v->scene()->items())
                if (it->type() == ui::NodeItem::Type &&
                    (!box || QLineF(it->sceneBoundingRect().center(), middle).length() <
                                 QLineF(box->sceneBoundingRect().center(), middle).length()))
                    box = static_cast<ui::NodeItem*>(it);
            QVERIFY(box);
            const QPointF offset = v->mapToScene(v->viewport()->rect().center()) - v->mapToScene(area.center());
            v->centerOn(box->sceneBoundingRect().center() + offset);
            const QRect boxInView = v->mapFromScene(box->sceneBoundingRect()).boundingRect();
            if (!boxInView.intersects(area)) continue;  // the scene edge kept it from scrolling there
            box->setSelected(true);
            const QRect sel = v->selectedBoxInViewport();
            QVERIFY(!sel.isEmpty());
            QVERIFY2(!v->minimapGeometry().intersects(sel), "the minimap covers the selected box");
            QVERIFY2(!v->legendGeometry().intersects(sel), "the legend covers the selected box");
            ++checked;
        }
        QVERIFY2(checked > 0, "no box could be scrolled under an overlay");
        // Hidden on request, they stay hidden.
        v->setMinimapVisible(false);
        v->setLegendVisible(false);
        QVERIFY(v->minimapGeometry().isEmpty());
        QVERIFY(v->legendGeometry().isEmpty());
    }
};

QTEST_MAIN(MainWindowLayoutTest)
#include "test_main_window_layout.moc"
