// The review of #32 on real PyTorch exports, one test per defect it listed: what the app shows
// (diff marks, docks, "Why Not Fused?", hierarchy, functions, dims, training, the onnxruntime
// profile) is checked by content, and the windows are saved as screenshots to look at.
#include <QAction>
#include <QDir>
#include <QSettings>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QDockWidget>
#include <QLabel>
#include <QTabWidget>
#include <QTimer>
#include <QLineEdit>
#include <QListWidget>
#include <QTableView>
#include <QToolButton>

#include "ExportWindow.h"
#include "ScreenshotContent.h"
#include "analysis/DominatorTreeView.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "analysis/FusionReasons.h"
#include "analysis/WhyNotFusedPanel.h"
#include "hierarchy/Hierarchy.h"
#include "layout/HierarchicalLayout.h"
#include "memory/MemoryChartWidget.h"
#include "memory/MemoryView.h"
#include "onnx/Import.h"
#include "passes/onnxruntime/OrtPasses.h"
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

QDockWidget* dock(MainWindow& w, const char* name) { return w.findChild<QDockWidget*>(name); }

/// Whether the dock is the raised tab of its group (its contents on screen).
bool raised(QDockWidget* d) { return d && d->isVisible() && !d->visibleRegion().isEmpty(); }

/// Waits until the "Why Not Fused?" panel shows an explanation of `node`.
bool waitExplained(ui::WhyNotFusedPanel& p, ir::NodeId node) {
    for (int i = 0; i < 600 && !(p.explanation() && p.explanation()->node == node && !p.busy()); ++i) QTest::qWait(50);
    return p.explanation() && p.explanation()->node == node;
}

ir::NodeId firstNodeOf(const ir::Graph& g, const std::string& op) {
    for (ir::NodeId id : g.nodeOrder())
        if (g.node(id).opType == op) return id;
    return ir::kNone;
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

    /// 2. Docks: the bottom charts and the tree fill their dock; a taller bottom dock leaves the
    /// pass list its rows; the chosen tab and sizes survive a Run and a new session; the status
    /// bar follows the shown snapshot.
    void docksFillGrowAndPersist() {
        {
            auto w = newWindow();
            QVERIFY(QTest::qWaitForWindowExposed(w.get()));
            QVERIFY(openAndWait(*w, fixture("vit_tiny_dynamic")));
            QVERIFY(runAndWait(*w));
            QTableView* passes = w->stepper()->tableView();
            const int passRowsBefore = passes->viewport()->height();
            QDockWidget* mem = dock(*w, "memory");
            QVERIFY(mem);
            mem->raise();
            w->resizeDocks({mem}, {420}, Qt::Vertical);
            for (int i = 0; i < 20 && w->memoryView()->isPlanning(); ++i) QTest::qWait(100);
            QTest::qWait(200);
            QVERIFY2(passes->viewport()->height() >= passRowsBefore - 2,
                     qPrintable(QString("pass list squeezed from %1 to %2 px").arg(passRowsBefore).arg(passes->viewport()->height())));
            auto* lifetime = w->memoryView()->findChildren<ui::MemoryChartWidget*>().value(0);
            auto* arena = w->memoryView()->findChild<ui::MemoryChartWidget*>("arenaChart");
            QVERIFY(lifetime && arena);
            QVERIFY2(arena->height() > mem->height() / 2,
                     qPrintable(QString("arena chart %1 px high in a %2 px dock").arg(arena->height()).arg(mem->height())));
            saveShot(*w, "memory_dock");
            const int memHeight = mem->height();
            // The tree dock: a Fit button, and the tree drawn along the dock's long side.
            QDockWidget* tree = dock(*w, "dominatorTree");
            QVERIFY(tree);
            tree->raise();
            QSignalSpy treeReady(w->dominatorTreeView(), &ui::DominatorTreeView::treeReady);
            treeReady.wait(5000);
            QTest::qWait(300);
            QVERIFY(w->dominatorTreeView()->findChild<QToolButton*>("fitTreeButton"));
            ui::GraphView* tv = w->dominatorTreeView()->treeView();
            QVERIFY(tv->snapshot());
            const auto& b = tv->snapshot()->layout.bounds;
            QVERIFY2(b.width > b.height, "a wide dock draws the tree top to bottom (a few rows on screen)");
            saveShot(*w, "dominator_dock");
            // Memory raised again; a Run keeps it raised and sized.
            mem->raise();
            QTest::qWait(100);
            QVERIFY(runAndWait(*w));
            QTest::qWait(200);
            QVERIFY2(raised(mem), "Run changed the chosen tab");
            QVERIFY2(std::abs(mem->height() - memHeight) <= 4, qPrintable(QString("Run resized the dock: %1 → %2").arg(memHeight).arg(mem->height())));
            // The status bar names the shown snapshot.
            QVERIFY(showRow(*w, 1));
            QVERIFY2(w->factsLine().startsWith("after "), qPrintable(w->factsLine()));
            QVERIFY(!w->factsLine().contains("with subgraphs"));
            w->close();
        }
        // A new session: the same tab raised, the same size.
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(w->restoredWindowState());
        QTest::qWait(200);
        QVERIFY2(raised(dock(*w, "memory")), "the chosen bottom tab was not restored");
    }

    /// 3. "Why Not Fused?": the answer first; an Opaque op explained from the op-pattern table
    /// (never "X … blocked by X"); sections per kind; it follows the selection while shown.
    void whyNotFusedReadsWellAndFollowsTheSelection() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("vit_tiny_dynamic")));
        const ir::Graph& g = w->model()->graph;
        const ir::NodeId shape = firstNodeOf(g, "Shape");
        const ir::NodeId matmul = firstNodeOf(g, "MatMul");
        QVERIFY(shape != ir::kNone && matmul != ir::kNone);
        ui::WhyNotFusedPanel& panel = *w->whyNotFusedPanel();
        QVERIFY(w->graphView()->selectNode(shape));
        w->showWhyNotFused(shape);
        QVERIFY(waitExplained(panel, shape));
        const QString text = panel.summaryText();
        QVERIFY2(text.startsWith("Not fused"), qPrintable(text.left(200)));
        QVERIFY2(text.contains("Shape is Opaque in the op-pattern table: it reads only its input's shape"), qPrintable(text));
        QVERIFY(text.contains("Fusion groups (TVM FuseOps)"));
        for (int i = 0; i < panel.considerationList()->count(); ++i) {
            const QString item = panel.considerationList()->item(i)->text();
            QVERIFY2(!item.contains("blocked by"), qPrintable(item));
        }
        saveShot(*w, "why_not_fused_opaque");
        // The selection moves: the panel answers for the new node, not the old one.
        QVERIFY(w->graphView()->selectNode(matmul));
        QVERIFY2(waitExplained(panel, matmul), "the panel kept the previous node's answer");
        QVERIFY(!panel.summaryText().contains("Shape is Opaque"));
        QVERIFY(panel.summaryText().startsWith("Fused") || panel.summaryText().startsWith("Not fused"));
        // A refusal resting on an unknown shape says so, with how to get the shape.
        bool sawUnknown = false;
        for (ir::NodeId id : g.nodeOrder()) {
            if (g.node(id).opType != "Add") continue;
            QVERIFY(w->graphView()->selectNode(id) || true);
            w->showWhyNotFused(id);
            if (!waitExplained(panel, id)) continue;
            for (const auto& c : panel.explanation()->considered)
                if (!c.applied && ui::unknownShapeBehind(g, c, id) != ir::kNone) sawUnknown = true;
            if (sawUnknown) {
                QVERIFY2(panel.summaryText().contains("rests on an unknown shape") && panel.summaryText().contains("Dims field"),
                         qPrintable(panel.summaryText()));
                saveShot(*w, "why_not_fused_unknown_shape");
                break;
            }
        }
        qInfo() << "a refusal on an unknown shape found:" << sawUnknown;
    }

    /// 4. One hierarchy rule for the app and the CLI; summaries rank computing ops first; no
    /// group of constants only.
    void hierarchyRuleAndSummaries_data() { exportRows(); }
    void hierarchyRuleAndSummaries() {
        QFETCH(QString, name);
        auto model = onnxio::importModelFile(fixture(name).toStdString());
        const auto dg = layout::buildDisplayGraph(model.graph, {});
        const hierarchy::Hierarchy h = hierarchy::buildHierarchy(model.graph);
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture(name)));
        QCOMPARE(w->graphView()->snapshot()->hierarchy() != nullptr, layout::drawThroughHierarchy(dg.nodes.size(), h));
        const std::set<std::string> plumbing = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Reshape", "Concat", "Slice",
                                                "Transpose", "Cast", "Identity", "ConstantOfShape", "Range", "Expand"};
        for (const auto& grp : h.groups) {
            if (grp.id == hierarchy::kRootGroup) continue;
            QVERIFY2(grp.opCount > 0, qPrintable(QString::fromStdString(grp.path) + ": a group of constants only"));
            QVERIFY2(grp.name.rfind("nodes ", 0) != 0 || grp.dominantOps.empty(), qPrintable(QString::fromStdString(grp.name)));
            bool computes = false;
            for (const auto& n : h.membersOf(grp.id))
                computes |= !plumbing.count(model.graph.node(n).opType) && model.graph.node(n).opType != "Constant";
            if (computes && !grp.dominantOps.empty())
                QVERIFY2(!plumbing.count(grp.dominantOps.front().op),
                         qPrintable(QString::fromStdString(grp.path + " summary starts with " + grp.dominantOps.front().op)));
        }
    }

    /// 7. The dims field: shown for a model with symbolic dims, it pins them for the shapes on
    /// the edges (and so the memory plan and fusion); bad text opens a dialog naming the problem.
    void dimsFieldPinsTheModel() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("vit_tiny_dynamic")));
        QVERIFY(!w->symbolicDims().isEmpty());
        auto* field = w->findChild<QLineEdit*>("dimsField");
        QVERIFY(field && field->isVisible());
        const QString dim = w->symbolicDims().front();
        QSignalSpy ready(w.get(), &MainWindow::layoutReady);
        QVERIFY(w->applyDims(dim + "=8"));
        QVERIFY(waitFor(ready));
        const ir::Graph& g = w->model()->graph;
        const auto& in = g.value(g.inputs().front()).type.shape;
        QVERIFY(in && in->isStatic());
        QCOMPARE(in->dims.front().value.value_or(-1), int64_t(8));
        bool labelled = false;
        for (const auto& e : w->graphView()->snapshot()->display.edges)
            labelled |= QString::fromStdString(e.label).startsWith("8×");
        QVERIFY2(labelled, "no edge label carries the pinned size");
        QCOMPARE(w->dims(), dim + "=8");
        QVERIFY(field->isVisible());  // still there to change the sizes
        saveShot(*w, "dims_field");
        QSignalSpy error(w.get(), &MainWindow::errorShown);
        QVERIFY(!w->applyDims("nosuchdim=3"));
        QCOMPARE(error.count(), 1);
        QVERIFY(error.front().front().toString().contains("nosuchdim"));
        // A static model has no field.
        QVERIFY(openAndWait(*w, fixture("resnet_tiny_static")));
        QVERIFY(!field->isVisible());
    }

    /// 8. The onnxruntime profile in the stepper: each transformer a step; contrib ops tagged.
    void onnxruntimeProfileSteps() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("gpt_tiny_static")));
        w->stepper()->setLevel("ort-extended");
        QCOMPARE(w->stepper()->requestedPasses(), passes::ort::profilePipeline(passes::Level::Extended));
        QVERIFY(runAndWait(*w));
        const auto& run = *w->stepper()->lastRun();
        int ortRows = 0, contribRow = -1;
        for (int row = 1; row < run.rowCount(); ++row) {
            const std::string& pass = run.stepAt(row)->result.name;
            ortRows += pass.rfind("ort-", 0) == 0;
            if (contribRow < 0)
                for (ir::NodeId id : run.modelAt(row)->graph.nodeOrder())
                    if (run.modelAt(row)->graph.node(id).domain == "com.microsoft") { contribRow = row; break; }
        }
        QVERIFY2(ortRows > 3, "the profile's transformers are not steps of their own");
        if (contribRow > 0) {
            QVERIFY(showRow(*w, contribRow));
            int tagged = 0;
            for (QGraphicsItem* i : w->graphView()->scene()->items())
                if (i->type() == ui::NodeItem::Type) tagged += static_cast<ui::NodeItem*>(i)->domainTag() == "ms";
            QVERIFY2(tagged > 0, "com.microsoft ops drawn like ai.onnx ones");
            saveShot(*w, "ort_contrib_ops");
        }
        qInfo() << "first row with a contrib op:" << contribRow;
    }

    /// 5. A call of a model-local function opens its body in a tab named by its path, at 100%
    /// when small.
    void functionCallOpensItsBody() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("vit_tiny_static")));
        w->stepper()->setGroupFunctions(true);
        QVERIFY(runAndWait(*w));
        const int last = w->stepper()->tableModel()->rowCount() - 1;
        QVERIFY(showRow(*w, last));
        ui::GraphView& v = *w->graphView();
        const ir::Model& m = *w->shownModel();
        ir::NodeId call = ir::kNone;
        for (ir::NodeId id : m.graph.nodeOrder())
            if (m.findFunction(m.graph.node(id).domain, m.graph.node(id).opType) && v.itemForNode(id)) { call = id; break; }
        QVERIFY2(call != ir::kNone, "group-functions made no function call on the ViT");
        auto* tabs = w->findChild<QTabWidget*>();
        QVERIFY(tabs);
        const int before = tabs->count();
        v.centerOn(v.itemForNode(call));
        QTest::mouseDClick(v.viewport(), Qt::LeftButton, {}, v.mapFromScene(v.itemForNode(call)->sceneBoundingRect().center()));
        QCOMPARE(tabs->count(), before + 1);
        const QString title = tabs->tabText(tabs->currentIndex());
        const ir::Node& n = m.graph.node(call);
        QVERIFY2(title.contains("▸") && title.contains(QString::fromStdString(n.opType)), qPrintable(title));
        auto* body = qobject_cast<ui::GraphView*>(tabs->currentWidget());
        QVERIFY(body && body->snapshot());
        QCOMPARE(body->snapshot()->graph, m.findFunction(n.domain, n.opType)->body.get());
        const auto& b = body->snapshot()->layout.bounds;
        if (b.width <= body->viewport()->width() && b.height <= body->viewport()->height())
            QCOMPARE(body->transform().m11(), 1.0);
        saveShot(*w, "function_body");
    }

    /// 5b. Made-up dim names ("unk__9", "Gather1928_dim_0") read "?" on the edges; the raw name
    /// is in the edge's tooltip.
    void generatedDimNamesAreShownAsUnknown() {
        auto model = onnxio::importModelFile(fixture("vit_tiny_dynamic").toStdString());
        // Rename the first symbolic dim of the first input to what an exporter would make up.
        auto& shape = model.graph.value(model.graph.inputs().front()).type.shape;
        QVERIFY(shape);
        ir::Dim* sym = nullptr;
        for (auto& d : shape->dims)
            if (!d.isStatic() && !d.param.empty()) { sym = &d; break; }
        QVERIFY(sym);
        sym->param = "unk__9";
        const auto dg = layout::buildDisplayGraph(model.graph, {});
        bool question = false;
        for (const auto& e : dg.edges)
            if (e.value == model.graph.inputs().front()) {
                QVERIFY2(e.label.find("unk__9") == std::string::npos, e.label.c_str());
                question |= e.label.rfind("?", 0) == 0;
            }
        QVERIFY(question);
    }

    /// 6. The training dialog says what it adds, from which snapshot and that it replaces the
    /// run; it names outputs with their shapes and offers recompute.
    void trainingDialogSaysWhatItDoes() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("resnet_tiny_static")));
        QVERIFY(runAndWait(*w));
        QAction* build = nullptr;
        for (QAction* a : w->findChildren<QAction*>())
            if (a->text().remove('&').contains("Build Training Graph")) build = a;
        QVERIFY(build);
        QTimer::singleShot(300, [&] {
            QDialog* d = nullptr;
            for (QWidget* tl : QApplication::topLevelWidgets())
                if (auto* dd = qobject_cast<QDialog*>(tl); dd && dd->isVisible()) d = dd;
            QVERIFY(d);
            auto* intro = d->findChild<QLabel*>("trainingIntro");
            QVERIFY(intro);
            QVERIFY2(intro->text().contains("replaces the stepper's current run") && intro->text().contains("input model"),
                     qPrintable(intro->text()));
            auto* out = d->findChild<QComboBox*>("trainingOutput");
            QVERIFY(out && out->count() > 0);
            QVERIFY2(out->itemText(0).contains("float32") || out->itemText(0).contains("×") || out->itemText(0).contains("x"),
                     qPrintable(out->itemText(0)));
            QVERIFY(d->findChild<QCheckBox*>("trainingRecompute"));
            d->grab().save(QString(PASSLENS_SCREENSHOT_DIR) + "/review_training_dialog.png");
            d->reject();
        });
        build->trigger();
    }

    /// 7. Edge labels never print over each other or over a box: on Faster R-CNN, where many
    /// edges converge on Split/Concat, each label takes a free place beside its own edge; the
    /// few with none show while their edge is highlighted.
    void edgeLabelsDoNotCollide() {
        auto w = newWindow();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(openAndWait(*w, fixture("fasterrcnn_tiny_static")));
        ui::GraphView& v = *w->graphView();
        std::vector<QRectF> labels, boxes;
        int labelled = 0;
        for (QGraphicsItem* item : v.scene()->items())
            if (auto* e = dynamic_cast<ui::EdgeItem*>(item))
                if (auto r = e->shownLabelRect()) labels.push_back(*r);
        for (const auto& b : v.snapshot()->layout.boxes) boxes.emplace_back(b.rect.x, b.rect.y, b.rect.width, b.rect.height);
        for (const auto& e : v.snapshot()->display.edges) labelled += e.label.empty() ? 0 : 1;
        QVERIFY2(labelled > 40, qPrintable(QString::number(labelled)));
        QVERIFY2(labels.size() * 10 >= static_cast<size_t>(labelled) * 8,
                 qPrintable(QString("%1 of %2 labels shown").arg(labels.size()).arg(labelled)));
        for (size_t i = 0; i < labels.size(); ++i) {
            for (size_t j = i + 1; j < labels.size(); ++j)
                QVERIFY2(!labels[i].intersects(labels[j]), qPrintable(QString("labels %1 and %2 overlap").arg(i).arg(j)));
            for (const QRectF& b : boxes) QVERIFY(!labels[i].intersects(b));
        }
        saveShot(*w, "edge_labels_fasterrcnn");
    }
};

QTEST_MAIN(ExportReviewTest)
#include "test_export_review.moc"
