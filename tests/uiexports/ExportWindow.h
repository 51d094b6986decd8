#pragma once
// Shared by the tests of the app on real PyTorch exports (tests/models): open a fixture, run the
// default level, show a step, and ask what is on screen.
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QSignalSpy>
#include <QtTest>
#include <memory>

#include "MainWindow.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "stepper/StepperPanel.h"
#include "stepper/PipelineJob.h"

namespace passlens::test {

using passlens::ui::MainWindow;


inline const char* const kExports[] = {"vit_tiny_dynamic", "transformer_encoder_dynamic", "gpt_tiny_static",
                                "swin_tiny_static", "fasterrcnn_tiny_static", "resnet_tiny_static"};

inline QString fixture(const QString& name) { return QString(PASSLENS_FIXTURES_DIR) + "/" + name + ".onnx"; }

inline bool waitFor(QSignalSpy& spy, int ms = 120000) { return spy.count() > 0 || spy.wait(ms); }

/// The scene rect the viewport shows, computed here rather than asked of the view.
inline QRectF visibleRect(const ui::GraphView& v) { return v.mapToScene(v.viewport()->rect()).boundingRect(); }

inline bool onScreen(const ui::GraphView& v, const QGraphicsItem* item) {
    return item && item->isVisible() && item->sceneBoundingRect().intersects(visibleRect(v));
}

/// Boxes (operators, inputs, outputs, groups) at least partly on screen.
inline int boxesOnScreen(const ui::GraphView& v) {
    int n = 0;
    for (QGraphicsItem* i : v.scene()->items())
        n += i->type() == ui::NodeItem::Type && onScreen(v, i);
    return n;
}

/// Graph-input boxes at least partly on screen and not under the legend or the overview map:
/// where a reader of the model starts.
inline int inputsOnScreen(const ui::GraphView& v) {
    int n = 0;
    for (const auto& node : v.snapshot()->display.nodes)
        if (node.kind == layout::DisplayNode::Kind::Input)
            for (QGraphicsItem* i : v.scene()->items(visibleRect(v)))
                if (i->type() == ui::NodeItem::Type && static_cast<ui::NodeItem*>(i)->key() == node.key && onScreen(v, i)) {
                    const QRect inView = v.mapFromScene(i->sceneBoundingRect()).boundingRect();
                    n += !inView.intersects(v.legendGeometry()) && !inView.intersects(v.minimapGeometry());
                }
    return n;
}

/// Whether something the shown step marks is on screen: an added or changed box, a removed
/// node's ghost, or a collapsed group badged with changes.
inline bool aChangeOnScreen(MainWindow& w) {
    ui::GraphView& v = *w.graphView();
    const auto& d = w.shownDiff();
    for (const auto* ids : {&d.added, &d.changed})
        for (ir::NodeId id : *ids)
            if (onScreen(v, v.itemForNode(id))) return true;
    for (QGraphicsItem* i : v.scene()->items())
        if (i->type() == ui::GhostItem::Type && onScreen(v, i)) return true;
    for (QGraphicsItem* i : v.scene()->items())
        if (i->type() == ui::NodeItem::Type) {
            const uint32_t key = static_cast<ui::NodeItem*>(i)->key();
            if (layout::isGroupKey(key) && v.groupStyle(layout::groupOfKey(key)) && onScreen(v, i)) return true;
        }
    return false;
}

/// Whether the step marks anything the drawing can show (the diff may name only folded constants).
inline bool stepHasDrawnChanges(MainWindow& w) {
    ui::GraphView& v = *w.graphView();
    const auto& d = w.shownDiff();
    for (const auto* ids : {&d.added, &d.changed})
        for (ir::NodeId id : *ids)
            if (v.itemForNode(id)) return true;
    return v.ghostCount() > 0;
}

inline bool openAndWait(MainWindow& w, const QString& path) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    if (!w.openFile(path)) return false;
    return waitFor(ready);
}

/// Runs the stepper at its current (default) level; waits until row 0 is drawn.
inline bool runAndWait(MainWindow& w) {
    QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
    QSignalSpy shown(&w, &MainWindow::stepShown);
    w.stepper()->run();
    if (!waitFor(done) || !w.stepper()->lastRun() || !w.stepper()->lastRun()->result) return false;
    while (!(w.shownStep() == 0 && !w.layoutRunning()))
        if (!shown.wait(120000)) return false;
    return true;
}

/// Shows stepper row `row` and waits until it is drawn with its ghosts (when it removed nodes).
inline bool showRow(MainWindow& w, int row) {
    QSignalSpy shown(&w, &MainWindow::stepShown);
    QSignalSpy ghosts(&w, &MainWindow::ghostsShown);
    w.stepper()->setCurrentRow(row);
    while (!(w.shownStep() == row && !w.layoutRunning()))
        if (!shown.wait(120000)) return false;
    if (!w.shownDiff().removed.empty() && w.graphView()->ghostCount() == 0) ghosts.wait(10000);
    QCoreApplication::processEvents();
    return true;
}

inline QString where(MainWindow& w, const QString& when) {
    const QRectF r = visibleRect(*w.graphView());
    const auto b = w.graphView()->snapshot()->layout.bounds;
    return QString("%1: viewport (%2, %3, %4×%5) of drawing (%6, %7, %8×%9), zoom %10")
        .arg(when).arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height())
        .arg(b.x).arg(b.y).arg(b.width).arg(b.height).arg(w.graphView()->transform().m11());
}

inline void exportRows() {
    QTest::addColumn<QString>("name");
    for (const char* e : kExports) QTest::newRow(e) << QString(e);
}

inline std::unique_ptr<MainWindow> newWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    return w;
}


}  // namespace passlens::test
