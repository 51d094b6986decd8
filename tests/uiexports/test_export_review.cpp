// The review of #32 on real PyTorch exports, one test per defect it listed: what the app shows
// (diff marks, docks, "Why Not Fused?", hierarchy, functions, dims, training, the onnxruntime
// profile) is checked by content, and the windows are saved as screenshots to look at.
#include <QAction>
#include <QDir>
#include <QSettings>

#include "ExportWindow.h"
#include "ScreenshotContent.h"
#include "stepper/DiffStyle.h"
#include "stepper/PassTableModel.h"

using namespace passlens;
using namespace passlens::test;

namespace {

void saveShot(QWidget& w, const QString& name) {
    QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
    w.grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/review_" + name + ".png");
}

/// HSV saturation (0–255) of the pixel at a scene point of the view, as painted.
int saturationAt(ui::GraphView& v, const QImage& shot, QPointF scenePoint) {
    const QPoint p = v.mapFromScene(scenePoint);
    return shot.pixelColor(p).hsvSaturation();
}

}  // namespace

class ExportReviewTest : public QObject {
    Q_OBJECT
private slots:
    void init() { QSettings().clear(); }

    /// 1. A step's diff never reads as an op category: the marked boxes keep their category fill
    /// and carry a ring (changed ones also hatching), unchanged boxes are desaturated; find's
    /// highlight is its own and a step clears it.
    void diffMarksAreRingsAndSearchIsClearedPerSnapshot() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("vit_tiny_static")));
        ui::GraphView& v = *w->graphView();
        w->find("op:Softmax");
        QVERIFY(!v.searchHits().empty() || v.selectedNode() != ir::kNone);
        for (ir::NodeId id : v.searchHits())
            QCOMPARE(QString::fromStdString(w->model()->graph.node(id).opType), QString("Softmax"));
        QVERIFY(runAndWait(*w));
        QVERIFY2(v.searchHits().empty(), "find's highlight outlived the snapshot it was made on");
        // The first step that changed a drawn node.
        const int rows = w->stepper()->tableModel()->rowCount();
        ir::NodeId marked = ir::kNone;
        int row = 1;
        for (; row < rows && marked == ir::kNone; ++row) {
            QVERIFY(showRow(*w, row));
            for (const auto* ids : {&w->shownDiff().changed, &w->shownDiff().added})
                for (ir::NodeId id : *ids)
                    if (v.itemForNode(id) && marked == ir::kNone) marked = id;
        }
        QVERIFY2(marked != ir::kNone, "no step changed a drawn node");
        QVERIFY(v.diffMode());
        const ui::NodeStyle* style = v.nodeStyle(marked);
        QVERIFY(style);
        QVERIFY2(!style->fill.isValid(), "a diff state repaints the box: it would read as an op category");
        QVERIFY(style->outline.isValid());
        const ui::DiffState state = w->shownDiff().stateOf(marked);
        QCOMPARE(style->outline, ui::diffColor(state));
        QCOMPARE(style->hatched, state == ui::DiffState::Changed);
        // Unchanged operator boxes are muted, marked ones are not.
        int muted = 0, unmuted = 0;
        for (QGraphicsItem* i : v.scene()->items())
            if (i->type() == ui::NodeItem::Type) {
                auto* n = static_cast<ui::NodeItem*>(i);
                const uint32_t key = n->key();
                const bool isMarked = (layout::isOpKey(key) && w->shownDiff().stateOf(key) != ui::DiffState::Unchanged) ||
                                      (layout::isGroupKey(key) && v.groupStyle(layout::groupOfKey(key)));  // "3 changed" inside
                if (isMarked) QVERIFY2(!n->isMuted(), "a changed box drawn muted");
                else if (n->isMuted()) ++muted;
                else if (!(layout::isOpKey(key) && v.nodeStyle(key))) ++unmuted;  // other highlights (a path) keep their colors
            }
        QVERIFY(muted > 0);
        QCOMPARE(unmuted, 0);
        // As painted: the marked box's ring is its state's color.
        w->graphView()->scene()->clearSelection();
        v.centerOn(v.itemForNode(marked));
        QCoreApplication::processEvents();
        const QImage shot = v.viewport()->grab().toImage();
        const QRectF box = v.itemForNode(marked)->sceneBoundingRect().adjusted(9, 14, -14, -9);  // the box itself
        // The most saturated pixel just above the box's top edge, where the ring runs.
        QColor ring;
        const QPoint top = v.mapFromScene(QPointF(box.center().x(), box.top()));
        for (int y = top.y() - 8; y <= top.y(); ++y)
            if (QColor c = shot.pixelColor(top.x(), y); c.hsvSaturation() > ring.hsvSaturation()) ring = c;
        QVERIFY2(std::abs(ring.hue() - ui::diffColor(state).hue()) < 20 && ring.hsvSaturation() > 120,
                 qPrintable(QString("ring pixel %1, expected near %2").arg(ring.name(), ui::diffColor(state).name())));
        // A muted box's fill is grey-ish whatever its category.
        for (QGraphicsItem* i : v.items(v.viewport()->rect()))
            if (i->type() == ui::NodeItem::Type && static_cast<ui::NodeItem*>(i)->isMuted()) {
                const QRectF r = i->sceneBoundingRect().adjusted(9, 14, -14, -9);
                QVERIFY2(saturationAt(v, shot, QPointF(r.left() + 3, r.center().y())) < 40, "an unchanged box keeps its full color");
                break;
            }
        saveShot(*w, "diff_vit");
        // Find on this snapshot highlights; the next step clears it.
        w->find("op:MatMul");
        QVERIFY(!v.searchHits().empty());
        if (row < rows) {
            QVERIFY(showRow(*w, row));
            QVERIFY(v.searchHits().empty());
        }
    }
};

QTEST_MAIN(ExportReviewTest)
#include "test_export_review.moc"
