// Large graphs in the app: drawn through their hierarchy. The opening drawing stays within a box
// budget on 2k and 25k-node models (scoped and flat names), opening a group shows exactly its
// members, find reaches a node inside a collapsed group and opens the way to it, and a 50k-node
// chain opens without a crash. Screenshots of a 25k-node model go to the build folder.
#include <QAction>
#include <QDir>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>

#include "ScreenshotContent.h"
#include <set>

#include "HierarchyModels.h"
#include "MainWindow.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "passes/PassManager.h"
#include "stepper/StepperPanel.h"

using namespace passlens;
using passlens::test::LayerNaming;
using passlens::ui::MainWindow;

namespace {

/// Opens `m` and waits for its drawing.
bool show(MainWindow& w, ir::Model m, const QString& title) {
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    w.setModel(std::make_shared<ir::Model>(std::move(m)), title);
    return ready.count() > 0 || ready.wait(300000);
}

bool waitExpansion(MainWindow& w, const std::function<void()>& act) {
    QSignalSpy shown(&w, &MainWindow::expansionShown);
    act();
    return shown.count() > 0 || shown.wait(120000);
}

std::set<ir::NodeId> drawnOps(const ui::GraphView& v) {
    std::set<ir::NodeId> out;
    for (const auto& n : v.snapshot()->display.nodes)
        if (n.kind == layout::DisplayNode::Kind::Op) out.insert(n.node);
    return out;
}

/// A group with no subgroups and some members, drawn collapsed now.
hierarchy::GroupId collapsedLeafGroup(const ui::GraphView& v) {
    const auto& h = *v.snapshot()->hierarchy();
    for (const auto& n : v.snapshot()->display.nodes)
        if (n.kind == layout::DisplayNode::Kind::Group) {
            hierarchy::GroupId g = n.group;
            while (!h.group(g).children.empty()) g = h.group(g).children.front();
            return g;
        }
    return hierarchy::kNoGroup;
}

void screenshot(MainWindow& w, const QString& name) {
    QDir().mkpath(PASSLENS_SCREENSHOT_DIR);
    const QImage shot = w.grab().toImage();
    shot.save(QString(PASSLENS_SCREENSHOT_DIR) + "/" + name);
    PASSLENS_VERIFY_DRAWN(shot);
}

}  // namespace

class LargeGraphTest : public QObject {
    Q_OBJECT
private slots:
    void topLevelIsBoundedAndGroupsOpenToTheirMembers_data();
    void topLevelIsBoundedAndGroupsOpenToTheirMembers();
    void findOpensThePathToADeepNode();
    void stepperMarksTheGroupsAPassChanged();
    void smallModelsOpenWhole();
    void chainOf50kNodesOpens();
    void generated25kModelScreenshots();
    void steppingKeepsOpenGroupsAndPlacesOnlyChangedOnes();
};

void LargeGraphTest::topLevelIsBoundedAndGroupsOpenToTheirMembers_data() {
    QTest::addColumn<int>("layers");
    QTest::addColumn<int>("naming");
    QTest::addColumn<QString>("shot");
    QTest::newRow("2k scoped") << 150 << int(LayerNaming::Scoped) << QString();
    QTest::newRow("2k flat") << 150 << int(LayerNaming::Flat) << QString();
    QTest::newRow("2k metadata") << 150 << int(LayerNaming::Metadata) << QString();
    QTest::newRow("25k scoped") << 1800 << int(LayerNaming::Scoped) << QString("large-25k");
    QTest::newRow("25k flat") << 1800 << int(LayerNaming::Flat) << QString();
}

void LargeGraphTest::topLevelIsBoundedAndGroupsOpenToTheirMembers() {
    QFETCH(int, layers);
    QFETCH(int, naming);
    QFETCH(QString, shot);
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(show(w, test::layeredModel(layers, LayerNaming(naming)), "layers"));
    ui::GraphView* v = w.graphView();
    QVERIFY(v->snapshot()->hierarchy());
    const int boxes = int(v->snapshot()->display.nodes.size());
    QVERIFY2(boxes <= int(ui::kOpeningBoxBudget), qPrintable(QString::number(boxes)));
    QVERIFY(v->groupItemCount() > 0);
    if (!shot.isEmpty()) screenshot(w, shot + "-collapsed.png");

    const hierarchy::GroupId g = collapsedLeafGroup(*v);
    QVERIFY(g != hierarchy::kNoGroup);
    const auto& h = *v->snapshot()->hierarchy();
    const std::set<ir::NodeId> before = drawnOps(*v);
    QVERIFY(waitExpansion(w, [&] { w.setGroupExpanded(g, true); }));
    std::set<ir::NodeId> added;
    for (ir::NodeId id : drawnOps(*v))
        if (!before.count(id)) added.insert(id);
    std::set<ir::NodeId> members;
    for (ir::NodeId id : h.membersOf(g))
        if (v->snapshot()->graph->node(id).opType != "Constant") members.insert(id);
    QCOMPARE(added, members);
    QVERIFY(v->groupFrameCount() >= 1);
    if (!shot.isEmpty()) {
        v->centerOnNode(*members.begin());
        screenshot(w, shot + "-layer-open.png");
    }
    // Closing it again gives the opening drawing back (from the cache).
    QVERIFY(waitExpansion(w, [&] { w.setGroupExpanded(g, false); }));
    QCOMPARE(drawnOps(*v), before);
}

void LargeGraphTest::findOpensThePathToADeepNode() {
    MainWindow w;
    w.show();
    QVERIFY(show(w, test::layeredModel(150, LayerNaming::Scoped), "scoped"));
    ui::GraphView* v = w.graphView();
    // A node of the last layer's norm group: hidden inside collapsed groups at first.
    const auto& g = *v->snapshot()->graph;
    ir::NodeId target = ir::kNone;
    for (ir::NodeId id : g.nodeOrder())
        if (g.node(id).name.find("layer.149/norm/Sqrt") != std::string::npos) target = id;
    QVERIFY(target != ir::kNone);
    QVERIFY(!v->itemForNode(target));
    QVERIFY(waitExpansion(w, [&] { w.find(QString::fromStdString(g.node(target).name)); }));
    QVERIFY(v->itemForNode(target));
    QCOMPARE(v->selectedNode(), target);
    auto* crumb = w.findChild<QLabel*>("breadcrumb");
    QVERIFY(crumb && crumb->text().contains("layer.149"));
    QVERIFY(crumb->toolTip().startsWith("graph ▸ ") && crumb->toolTip().contains("layer.149/norm/Sqrt"));
}

void LargeGraphTest::stepperMarksTheGroupsAPassChanged() {
    MainWindow w;
    w.show();
    QVERIFY(show(w, test::layeredModel(150, LayerNaming::Scoped), "scoped"));
    QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
    w.stepper()->setPassList("fuse-layer-norm");
    w.stepper()->run();
    QVERIFY(done.count() > 0 || done.wait(300000));
    QVERIFY(w.stepper()->lastRun() && w.stepper()->lastRun()->result);
    QSignalSpy shown(&w, &MainWindow::stepShown);
    w.stepper()->setCurrentRow(1);
    while (!(w.shownStep() == 1 && !w.layoutRunning())) QVERIFY(shown.wait(300000));
    const auto& diff = w.shownDiff();
    QVERIFY(!diff.added.empty());
    // Each collapsed group's badge counts the added and changed nodes inside it; no badge, none.
    ui::GraphView* v = w.graphView();
    QVERIFY(v->snapshot()->hierarchy());
    const auto& h = *v->snapshot()->hierarchy();
    std::set<ir::NodeId> marked(diff.added.begin(), diff.added.end());
    marked.insert(diff.changed.begin(), diff.changed.end());
    int badged = 0;
    for (const auto& n : v->snapshot()->display.nodes) {
        if (n.kind != layout::DisplayNode::Kind::Group) continue;
        int inside = 0;
        for (ir::NodeId id : h.membersOf(n.group)) inside += int(marked.count(id));
        const ui::NodeStyle* style = v->groupStyle(n.group);
        if (!inside) {
            QVERIFY(!style);
            continue;
        }
        QVERIFY(style);
        QCOMPARE(style->badge, QString("%1 changed").arg(inside));
        ++badged;
    }
    QVERIFY(badged > 0);
}

void LargeGraphTest::smallModelsOpenWhole() {
    MainWindow w;
    w.show();
    QVERIFY(show(w, test::layeredModel(4, LayerNaming::Scoped), "small"));
    QVERIFY(!w.graphView()->snapshot()->hierarchy());
    QCOMPARE(w.graphView()->groupItemCount(), 0);
    QCOMPARE(w.graphView()->operatorItemCount(), int(4 * test::kOpsPerLayer));
}

void LargeGraphTest::chainOf50kNodesOpens() {
    MainWindow w;
    w.show();
    QVERIFY(show(w, test::chainModel(50000), "chain"));
    ui::GraphView* v = w.graphView();
    QVERIFY(v->snapshot()->display.nodes.size() <= ui::kOpeningBoxBudget);
    const hierarchy::GroupId g = collapsedLeafGroup(*v);
    QVERIFY(waitExpansion(w, [&] { w.setGroupExpanded(g, true); }));
    QVERIFY(v->operatorItemCount() > 0);
}

void LargeGraphTest::steppingKeepsOpenGroupsAndPlacesOnlyChangedOnes() {
    MainWindow w;
    w.show();
    QVERIFY(show(w, test::layeredModel(150, LayerNaming::Scoped), "scoped"));
    ui::GraphView* v = w.graphView();
    const hierarchy::GroupId g = collapsedLeafGroup(*v);
    QVERIFY(waitExpansion(w, [&] { w.setGroupExpanded(g, true); }));
    const std::string path = v->snapshot()->hierarchy()->group(g).path;
    const size_t openBefore = v->snapshot()->expanded.size();
    // fuse-layer-norm changes every layer; fuse-conv-bn nothing on a transformer.
    QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
    w.stepper()->setPassList("fuse-layer-norm,fuse-conv-bn");
    w.stepper()->run();
    QVERIFY(done.count() > 0 || done.wait(300000));
    QVERIFY(w.stepper()->lastRun() && w.stepper()->lastRun()->result);
    QSignalSpy shown(&w, &MainWindow::stepShown);
    auto step = [&](int row) {
        w.stepper()->setCurrentRow(row);
        while (!(w.shownStep() == row && !w.layoutRunning()))
            if (!shown.wait(300000)) return false;
        return true;
    };
    QVERIFY(step(1));
    // The group opened before is open in the pass's graph too (found by its path).
    auto opened = v->snapshot()->hierarchy()->findPath(path);
    QVERIFY(opened);
    QVERIFY(v->snapshot()->expanded.count(*opened));
    QCOMPARE(v->snapshot()->expanded.size(), openBefore);
    // Only open groups are laid out, and of those only the ones whose content changed.
    const size_t placedByChange = v->snapshot()->groupsPlaced;
    qInfo() << "fuse-layer-norm step placed" << placedByChange << "of" << v->snapshot()->expanded.size() << "open groups";
    QVERIFY(placedByChange > 0);
    QVERIFY(placedByChange <= v->snapshot()->expanded.size());
    // A pass that changed nothing: every group's placement is reused, none is laid out.
    QVERIFY(step(2));
    QVERIFY(w.shownDiff().added.empty() && w.shownDiff().changed.empty() && w.shownDiff().removed.empty());
    QVERIFY(v->snapshot()->expanded.count(*v->snapshot()->hierarchy()->findPath(path)));
    QCOMPARE(v->snapshot()->groupsPlaced, size_t(0));
}

void LargeGraphTest::generated25kModelScreenshots() {
    // The docs' pictures: the generated 24k-node encoder file (tests/gen), opened as a user does,
    // collapsed and then with layer.0 open, in a first-start window.
    QSettings().clear();
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QSignalSpy ready(&w, &MainWindow::layoutReady);
    QVERIFY(w.openFile(QString(PASSLENS_GEN_MODELS_DIR) + "/bert_l320_scoped.onnx"));
    QVERIFY(ready.count() > 0 || ready.wait(300000));
    QTest::qWait(100);
    ui::GraphView* v = w.graphView();
    QVERIFY(v->snapshot()->hierarchy());
    QVERIFY(v->snapshot()->display.nodes.size() <= ui::kOpeningBoxBudget);
    // The collapsed boxes (the 320 layers in ranges of identical ones, the pooler) filling the view.
    QRectF boxes;
    const auto& snap = *v->snapshot();
    for (size_t i = 0; i < snap.display.nodes.size(); ++i)
        if (snap.display.nodes[i].kind == layout::DisplayNode::Kind::Group) {
            const auto& r = snap.layout.boxes[i].rect;
            boxes |= QRectF(r.x, r.y, r.width, r.height);
        }
    v->fitInView(boxes.adjusted(-160, -60, 160, 60), Qt::KeepAspectRatio);
    screenshot(w, "large-25k-collapsed.png");
    const auto& h = *v->snapshot()->hierarchy();
    hierarchy::GroupId layer0 = hierarchy::kNoGroup;
    for (const auto& g : h.groups)
        if (g.name == "layer.0") { layer0 = g.id; break; }
    QVERIFY(layer0 != hierarchy::kNoGroup);
    // layer.0 open with everything inside it (attention, intermediate, output).
    layout::Expansion open = layout::withPathTo(h, v->snapshot()->expanded, layer0);
    for (hierarchy::GroupId g = layer0; g < h.group(layer0).subtreeEnd; ++g) open.insert(g);
    QVERIFY(waitExpansion(w, [&] { w.showExpansion(open); }));
    QVERIFY(v->snapshot()->expanded.count(layer0));
    // A member selected: the breadcrumb names the way to it.
    bool selected = false;
    for (ir::NodeId id : h.membersOf(layer0))
        if ((selected = v->selectNode(id))) break;
    QVERIFY(selected);
    // The top of the layer's frame (its attention block) at a readable scale, the legend hidden
    // (View ▸ Legend) so the nested frames' labels at the top left show.
    if (auto* legend = w.findChild<QAction*>("legendAction")) legend->setChecked(false);
    for (const auto& f : v->snapshot()->frames)
        if (f.group == layer0) {
            const double scale = 0.72;
            v->resetTransform();
            v->scale(scale, scale);
            const QSizeF seen = QSizeF(v->viewport()->size()) / scale;
            v->centerOn(QPointF(f.rect.x + seen.width() / 2 - 20, f.rect.y + seen.height() / 2 - 20));
        }
    screenshot(w, "large-25k-layer-open.png");
}

QTEST_MAIN(LargeGraphTest)
#include "test_large_graphs.moc"
