// The analysis views on the offscreen platform: the dominator tree draws one box per node, its
// selection is linked both ways with the graph view, and selecting a node highlights exactly the
// nodes between it and its immediate post-dominator.
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QGraphicsScene>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>

#include "ScreenshotContent.h"
#include <algorithm>
#include <set>

#include "MainWindow.h"
#include "analysis/DominatorPath.h"
#include "analysis/DominatorTreeView.h"
#include "analysis/FusionGroups.h"
#include "analysis/GraphHighlighter.h"
#include "analysis/WhyNotFusedPanel.h"
#include "examples/Builder.h"
#include "examples/Examples.h"
#include "pipeline/Explain.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "stepper/StepperPanel.h"

using namespace passlens;
using passlens::ui::DominatorTreeView;
using passlens::ui::GraphView;
using passlens::ui::MainWindow;
using passlens::ui::WhyNotFusedPanel;

namespace {

std::shared_ptr<const ir::Model> example(const char* id) {
    const auto* ex = examples::find(id);
    return ex ? std::make_shared<const ir::Model>(ex->build()) : nullptr;
}

ir::NodeId nodeNamed(const ir::Graph& g, const char* name) { return g.findNode(name).value_or(ir::kNone); }

/// Opens an example in a fresh window and waits until both the graph and its tree are drawn.
bool openAndWait(MainWindow& w, const char* id) {
    // The tree's dock may share a tab group with other bottom docks: bring it to the front.
    if (auto* dock = w.findChild<QDockWidget*>("dominatorTree")) dock->raise();
    QSignalSpy graphReady(&w, &MainWindow::layoutReady);
    QSignalSpy treeReady(w.dominatorTreeView(), &DominatorTreeView::treeReady);
    w.openExample(id);
    if (!graphReady.count() && !graphReady.wait(20000)) return false;
    return treeReady.count() > 0 || treeReady.wait(20000);
}

/// Nodes of the shown graph that carry a style override now.
std::set<ir::NodeId> styledNodes(const GraphView& v) {
    std::set<ir::NodeId> out;
    for (ir::NodeId n : v.snapshot()->graph->nodeOrder())
        if (v.nodeStyle(n)) out.insert(n);
    return out;
}

/// Opens a model file in a fresh window and waits for the graph, its tree and its fusion clusters.
bool openFileAndWait(MainWindow& w, const QString& path) {
    QSignalSpy clusters(&w, &MainWindow::fusionClustersReady);
    if (!w.openFile(path)) return false;
    return clusters.count() > 0 || clusters.wait(60000);
}

/// Runs "Why not fused?" from the node's context menu and waits for the explanation.
bool whyNotFusedFromContextMenu(MainWindow& w, ir::NodeId id) {
    std::unique_ptr<QMenu> menu(w.graphView()->createNodeContextMenu(id, &w));
    QAction* why = menu->findChild<QAction*>("whyNotFused");
    if (!why) return false;
    QSignalSpy done(w.whyNotFusedPanel(), &WhyNotFusedPanel::explained);
    why->trigger();
    return done.count() > 0 || done.wait(60000);
}

void clickNode(GraphView* v, ir::NodeId id) {
    auto* item = v->itemForNode(id);
    QVERIFY(item);
    v->centerOn(item);
    const QPoint p = v->mapFromScene(item->boundingRect().center());
    QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, p);
}

}  // namespace

class AnalysisViewsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QDir().mkpath(PASSLENS_SCREENSHOT_DIR); }

    void dominatorTreeDrawsOneBoxPerNodeInBothModes() {
        auto m = example("branchy_dominators");
        QVERIFY(m);
        DominatorTreeView view;
        view.resize(1000, 700);
        view.show();
        QSignalSpy ready(&view, &DominatorTreeView::treeReady);
        view.setGraph(ui::layoutNow(m, &m->graph, {}));
        QVERIFY(ready.wait(20000));
        QVERIFY(view.postDominators());
        QCOMPARE(view.treeView()->operatorItemCount(), static_cast<int>(m->graph.nodeCount()));
        QVERIFY(view.tree() && view.tree()->isPost());
        view.setPostDominators(false);
        QVERIFY(ready.wait(20000));
        QVERIFY(view.tree() && !view.tree()->isPost());
        QCOMPARE(view.treeView()->operatorItemCount(), static_cast<int>(m->graph.nodeCount()));
        // Weights are not edges from the entry: the head conv's immediate dominator is the Concat.
        const ir::NodeId head = nodeNamed(m->graph, "head"), join2 = nodeNamed(m->graph, "join2");
        QCOMPARE(view.tree()->idom(head), join2);
        view.setGraph(nullptr);
        QCOMPARE(view.treeView()->operatorItemCount(), 0);
    }

    void selectionIsLinkedBothWays() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "branchy_dominators"));
        const auto& g = w.model()->graph;
        GraphView* graph = w.graphView();
        GraphView* tree = w.dominatorTreeView()->treeView();
        // Graph → tree.
        const ir::NodeId left = nodeNamed(g, "left.relu");
        clickNode(graph, left);
        QCOMPARE(graph->selectedNode(), left);
        QCOMPARE(tree->selectedNode(), left);
        // Tree → graph.
        const ir::NodeId join1 = nodeNamed(g, "join1");
        clickNode(tree, join1);
        QCOMPARE(tree->selectedNode(), join1);
        QCOMPARE(graph->selectedNode(), join1);
        QCOMPARE(w.dominatorTreeView()->currentNode(), join1);
        // Clearing the tree's selection (e.g. a click on empty space) keeps the graph's.
        tree->scene()->clearSelection();
        QCOMPARE(graph->selectedNode(), join1);
    }

    void selectingANodeHighlightsExactlyThePathToItsPostDominator() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(openAndWait(w, "branchy_dominators"));
        const auto& g = w.model()->graph;
        GraphView* graph = w.graphView();
        // A hand-checked case: a branch conv's post-dominator is its activation.
        const ir::NodeId left = nodeNamed(g, "left"), leftRelu = nodeNamed(g, "left.relu");
        QVERIFY(graph->selectNode(left));
        QCOMPARE(styledNodes(*graph), (std::set<ir::NodeId>{left, leftRelu}));
        QVERIFY(graph->nodeStyle(leftRelu));
        QCOMPARE(graph->nodeStyle(leftRelu)->badge, QString("ipdom"));
        // In the tree, the edge from the post-dominator to the node is marked too.
        QCOMPARE(w.dominatorTreeView()->treeView()->styledEdgeCount(leftRelu, left), 1);
        // Every node: the styled set is exactly its post-dominator region.
        auto post = analysis::DominatorTree::build(g, true);
        for (ir::NodeId n : g.nodeOrder()) {
            QVERIFY(graph->selectNode(n));
            auto expected = analysis::pathToImmediateDominator(g, post, n);
            QVERIFY(std::find(expected.begin(), expected.end(), n) != expected.end());
            QCOMPARE(styledNodes(*graph), std::set<ir::NodeId>(expected.begin(), expected.end()));
        }
        // The Concat's region: its three inputs' paths do not matter, only join2 → head.
        const ir::NodeId join2 = nodeNamed(g, "join2"), head = nodeNamed(g, "head");
        QVERIFY(graph->selectNode(join2));
        QCOMPARE(styledNodes(*graph), (std::set<ir::NodeId>{join2, head}));
        // Clearing the selection removes the highlight and gives back styles set by others.
        graph->scene()->clearSelection();
        QVERIFY(styledNodes(*graph).empty());
        ui::NodeStyle diff;
        diff.fill = QColor("#ffd7d7");
        graph->setNodeStyle(head, diff);
        QVERIFY(graph->selectNode(join2));
        QCOMPARE(graph->nodeStyle(head)->fill, QColor("#ede9fe"));
        graph->scene()->clearSelection();
        QVERIFY(graph->nodeStyle(head));
        QCOMPARE(graph->nodeStyle(head)->fill, QColor("#ffd7d7"));
        QCOMPARE(styledNodes(*graph), (std::set<ir::NodeId>{head}));
    }

    void whyNotFusedNamesTheSecondConsumerAndHighlightsIt() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(openAndWait(w, "blocked_fusion"));
        const auto& g = w.model()->graph;
        const ir::NodeId conv = nodeNamed(g, "conv"), bn = nodeNamed(g, "bn"), tap = nodeNamed(g, "conv_tap.mean");
        QVERIFY(whyNotFusedFromContextMenu(w, conv));
        WhyNotFusedPanel* panel = w.whyNotFusedPanel();
        QVERIFY(panel->explanation());
        QCOMPARE(panel->explanation()->node, conv);
        // The reader is told about the second consumer, by name.
        QVERIFY(panel->summaryText().contains("conv_tap.mean"));
        // The chosen refusal's blocker is the second consumer, highlighted with the edge into it.
        const GraphView* graph = w.graphView();
        QVERIFY(graph->nodeStyle(tap));
        QCOMPARE(graph->nodeStyle(tap)->badge, QString("blocks"));
        QVERIFY(graph->nodeStyle(conv));
        QCOMPARE(graph->styledEdgeCount(conv, tap), 1);
        QCOMPARE(graph->styledEdgeCount(conv, bn), 0);
        // Exactly the chosen consideration's nodes, the explained node and the blocker are marked.
        auto expectMarked = [&](int row) {
            const auto& c = panel->explanation()->considered.at(size_t(row));
            std::set<ir::NodeId> expected(c.nodes.begin(), c.nodes.end());
            expected.insert({conv, tap});
            QCOMPARE(styledNodes(*graph), expected);
        };
        QVERIFY(panel->considerationList()->currentRow() >= 0);
        expectMarked(panel->considerationList()->currentRow());
        // Every refusal on this Conv is blocked by the tap; the Conv+BN fold names it as a reader.
        const auto& considered = panel->explanation()->considered;
        int fold = -1;
        for (size_t i = 0; i < considered.size(); ++i) {
            QVERIFY(!considered[i].applied);
            QCOMPARE(considered[i].blockingNode, tap);
            if (considered[i].rule == "fold-conv-bn") fold = int(i);
        }
        QVERIFY(fold >= 0);
        QVERIFY(QString::fromStdString(considered[size_t(fold)].message).contains("conv_tap.mean"));
        panel->selectConsideration(fold);
        expectMarked(fold);
        QVERIFY(styledNodes(*graph).count(bn));
        QCOMPARE(graph->styledEdgeCount(conv, tap), 1);
        QVERIFY(!graph->nodeStyle(nodeNamed(g, "gate")));
        // Selecting another node moves the highlight to its dominator path and clears the edge.
        QVERIFY(w.graphView()->selectNode(nodeNamed(g, "relu")));
        QCOMPARE(graph->styledEdgeCount(conv, tap), 0);
        QCOMPARE(graph->nodeStyle(tap), nullptr);
    }

    /// A refusal that rests on an unknown shape says so, names the value and how to give it a
    /// size; the same graph with the shape known gets no such line.
    void whyNotFusedSaysWhenARefusalRestsOnAnUnknownShape() {
        auto build = [](bool otherShapeKnown) {
            // mm is [1, 8]; the Add's other input is [rows, 8]: unless rows is 1 the Add
            // broadcasts mm, and the group must stop there. With rows unbound nobody knows.
            ir::GraphBuilder b("unknown_shape", 17);
            const ir::ValueId x = b.input("x", ir::DataType::Float, {1, 8});
            const ir::ValueId mm = b.op("MatMul", {x, b.constant("w", ir::floatTensor({8, 8}, std::vector<float>(64, 0.5f)))}, {}, "mm");
            const ir::ValueId other = b.inputSymbolic("other", ir::DataType::Float,
                                                      {otherShapeKnown ? ir::Dim::of(1) : ir::Dim::symbol("rows"), ir::Dim::of(8)});
            b.output(b.op("Relu", {b.op("Add", {mm, other}, {}, "add")}, {}, "relu"));
            return b.finish();
        };
        const QString note = "rests on an unknown shape";
        ir::Model unknown = build(false);
        const auto e = analysis::explainNode(unknown, *unknown.graph.findNode("mm"));
        QVERIFY(!e.nodes.empty());
        const QString html = WhyNotFusedPanel::explanationHtml(unknown.graph, e.nodes[0], e.warnings, "");
        QVERIFY2(html.contains(note) && html.contains("Dims field"), qPrintable(html));
        QVERIFY2(html.contains("rows"), qPrintable(html));
        ir::Model known = build(true);
        const auto k = analysis::explainNode(known, *known.graph.findNode("mm"));
        QVERIFY(!k.nodes.empty());
        QVERIFY(!WhyNotFusedPanel::explanationHtml(known.graph, k.nodes[0], k.warnings, "").contains(note));
    }

    void whyNotFusedRunsThePassesOncePerModelOrReadsTheStepper() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QVERIFY(openAndWait(w, "blocked_fusion"));
        const auto& g = w.model()->graph;
        WhyNotFusedPanel* panel = w.whyNotFusedPanel();
        // No run yet: the first question runs the pattern passes, the second reuses their remarks.
        QVERIFY(whyNotFusedFromContextMenu(w, nodeNamed(g, "conv")));
        QCOMPARE(panel->pipelineRuns(), 1);
        QVERIFY(panel->summaryText().contains("run on a copy of this model"));
        QVERIFY(whyNotFusedFromContextMenu(w, nodeNamed(g, "relu")));
        QCOMPARE(panel->pipelineRuns(), 1);
        // After a stepper run the remarks are the run's own: no pass runs again.
        QSignalSpy done(w.stepper(), &ui::StepperPanel::runFinished);
        w.stepper()->setLevel("extended");
        w.stepper()->run();
        QVERIFY(done.count() > 0 || done.wait(60000));
        QVERIFY(whyNotFusedFromContextMenu(w, nodeNamed(w.model()->graph, "conv")));
        QCOMPARE(panel->pipelineRuns(), 1);
        QVERIFY2(panel->summaryText().contains("stepper's run"), qPrintable(panel->summaryText()));
        // The blocked Conv+BN fold is still explained, now from the run's remarks.
        bool fold = false;
        for (const auto& c : panel->explanation()->considered) fold |= c.source == "fuse-conv-bn" && !c.applied;
        QVERIFY(fold);
    }

    void clusterOverlayCountEqualsMultiMemberGroups() {
        QSettings().remove("view/fusionGroups");  // the default, not what an earlier run left
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QSignalSpy clusters(&w, &MainWindow::fusionClustersReady);
        QVERIFY(openAndWait(w, "blocked_fusion"));
        QVERIFY(clusters.count() > 0 || clusters.wait(20000));
        auto plan = analysis::computeFusionGroups(w.model()->graph);
        QVERIFY(plan.multiMemberGroupCount() > 0);
        QCOMPARE(w.graphView()->clusterOverlayCount(), static_cast<int>(plan.multiMemberGroupCount()));
        QCOMPARE(clusters.last().at(0).toInt(), static_cast<int>(plan.multiMemberGroupCount()));
        // Each group's anchor is one of its members.
        for (const auto& c : w.graphView()->clusters())
            QVERIFY(std::find(c.members.begin(), c.members.end(), c.anchor) != c.members.end());
        // The View menu's toggle is off by default (frames built, none shown); on, it shows the
        // selected node's group only, and off again hides it without dropping the layer.
        QAction* toggle = w.findChild<QAction*>("fusionGroupsAction");
        QVERIFY(toggle && toggle->isCheckable() && !toggle->isChecked());
        bool inViewMenu = false;
        for (QAction* a : w.menuBar()->actions())
            if (a->menu() && a->text() == "&View") inViewMenu = a->menu()->actions().contains(toggle);
        QVERIFY(inViewMenu);
        QVERIFY(!w.graphView()->clustersVisible());
        const ui::NodeCluster& first = w.graphView()->clusters().front();
        QVERIFY(w.graphView()->selectNode(first.members.front()));
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 0);
        toggle->trigger();
        QVERIFY(w.graphView()->clustersVisible());
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 1);
        w.graphView()->scene()->clearSelection();
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 0);
        QVERIFY(w.graphView()->selectNode(first.members.back()));
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 1);
        toggle->trigger();
        QVERIFY(!w.graphView()->clustersVisible());
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 0);
        QCOMPARE(w.graphView()->clusterOverlayCount(), static_cast<int>(plan.multiMemberGroupCount()));
        // The tree's context menu offers the same question.
        const ir::NodeId conv = nodeNamed(w.model()->graph, "conv");
        std::unique_ptr<QMenu> treeMenu(w.dominatorTreeView()->treeView()->createNodeContextMenu(conv, &w));
        QVERIFY(treeMenu->findChild<QAction*>("whyNotFused"));
        // A real model with many groups.
        QVERIFY(openFileAndWait(w, QString(PASSLENS_MODELS_DIR) + "/ch_ppocr_mobile_v2.0_cls_infer.onnx"));
        auto real = analysis::computeFusionGroups(w.model()->graph);
        QVERIFY(real.multiMemberGroupCount() > 10);
        QCOMPARE(w.graphView()->clusterOverlayCount(), static_cast<int>(real.multiMemberGroupCount()));
    }

    void realModelTreeLinksAndExplains() {
        MainWindow w;
        w.resize(1600, 1000);
        w.show();
        QElapsedTimer t;
        t.start();
        QSignalSpy treeReady(w.dominatorTreeView(), &DominatorTreeView::treeReady);
        QVERIFY(openFileAndWait(w, QString(PASSLENS_MODELS_DIR) + "/ch_PP-OCRv4_rec_infer.onnx"));
        // Drawn through its hierarchy (over 300 boxes): the tree waits until its dock is shown.
        if (auto* d = w.findChild<QDockWidget*>("dominatorTree")) { d->show(); d->raise(); }
        QVERIFY(treeReady.count() > 0 || treeReady.wait(60000));
        qInfo() << "PP-OCRv4 rec: graph, tree and clusters ready in" << t.elapsed() << "ms";
        const auto& g = w.model()->graph;
        // One tree box per node except the Constant leaves the tree folds away like the graph does.
        int constantLeaves = 0;
        for (ir::NodeId n : g.nodeOrder()) constantLeaves += g.node(n).opType == "Constant";
        // A graph drawn through its hierarchy gets a partial tree around the selection.
        const int treeBoxes = w.dominatorTreeView()->treeView()->operatorItemCount();
        if (w.dominatorTreeView()->partial()) QVERIFY(treeBoxes > 0 && treeBoxes <= int(ui::kMaxTreeBoxes));
        else QCOMPARE(treeBoxes, static_cast<int>(g.nodeCount()) - constantLeaves);
        // Selection in the graph reaches the tree, and the highlight is that node's region.
        ir::NodeId conv = ir::kNone;
        for (ir::NodeId n : g.nodeOrder())
            if (g.node(n).opType == "Conv") { conv = n; break; }
        QVERIFY(conv != ir::kNone);
        QVERIFY(w.graphView()->selectNode(conv));
        // A partial tree is redrawn around a node it does not hold (off the GUI thread).
        QTRY_COMPARE_WITH_TIMEOUT(w.dominatorTreeView()->treeView()->selectedNode(), conv, 30000);
        auto path = w.dominatorTreeView()->pathFor(conv);
        QCOMPARE(styledNodes(*w.graphView()), std::set<ir::NodeId>(path.begin(), path.end()));
        t.restart();
        QVERIFY(whyNotFusedFromContextMenu(w, conv));
        qInfo() << "PP-OCRv4 rec: why-not-fused explained in" << t.elapsed() << "ms";
        QCOMPARE(w.whyNotFusedPanel()->explanation()->node, conv);
        // The panel shows the same group the fuser puts the node in, and its frame is drawn.
        const auto plan = analysis::computeFusionGroups(g);
        QCOMPARE(w.whyNotFusedPanel()->explanation()->group, plan.groupOf(conv));
        QCOMPARE(w.whyNotFusedPanel()->considerationList()->count(),
                 static_cast<int>(w.whyNotFusedPanel()->explanation()->considered.size()));
        QVERIFY(w.whyNotFusedPanel()->summaryText().contains(QString("group #%1").arg(plan.groupOf(conv))));
        // Frames for the groups with a drawn member: all of them when drawn whole, fewer with
        // groups of the hierarchy collapsed.
        if (w.graphView()->snapshot()->hierarchy())
            QVERIFY(w.graphView()->clusterOverlayCount() > 0 && w.graphView()->clusterOverlayCount() <= int(plan.multiMemberGroupCount()));
        else
            QCOMPARE(w.graphView()->clusterOverlayCount(), static_cast<int>(plan.multiMemberGroupCount()));
    }

    void whyNotFusedScreenshot() {
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "blocked_fusion"));
        const ir::NodeId conv = nodeNamed(w.model()->graph, "conv");
        QVERIFY(whyNotFusedFromContextMenu(w, conv));
        // Show the example's topic: the Conv+BN fold, stopped by the tap reading the raw Conv output.
        const auto& considered = w.whyNotFusedPanel()->explanation()->considered;
        for (size_t i = 0; i < considered.size(); ++i)
            if (considered[i].rule == "fold-conv-bn") w.whyNotFusedPanel()->selectConsideration(int(i));
        QCOMPARE(w.graphView()->styledEdgeCount(conv, nodeNamed(w.model()->graph, "conv_tap.mean")), 1);
        w.graphView()->showReadableOverview();
        QCoreApplication::processEvents();
        const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/why_not_fused.png";
        QVERIFY(w.grab().save(path));
        QCOMPARE(QImage(path).size(), QSize(1920, 1080));
        PASSLENS_VERIFY_DRAWN(path);
    }

    void fusionGroupsScreenshot() {
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openFileAndWait(w, QString(PASSLENS_MODELS_DIR) + "/ch_ppocr_mobile_v2.0_cls_infer.onnx"));
        QVERIFY(w.graphView()->clusterOverlayCount() > 10);
        // A stretch in the middle of the network, at reading size.
        const auto hits = w.graphView()->findNodes("p2o.Conv.7");
        QVERIFY(!hits.empty());
        // The overlay on, one group outlined: the selected node's.
        w.setFusionClustersVisible(true);
        QVERIFY(w.graphView()->selectNode(hits.front()));
        QCOMPARE(w.graphView()->visibleClusterOverlayCount(), 1);
        QCoreApplication::processEvents();
        const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/fusion_groups.png";
        QVERIFY(w.grab().save(path));
        QCOMPARE(QImage(path).size(), QSize(1920, 1080));
        PASSLENS_VERIFY_DRAWN(path);
    }

    void dominatorTreeScreenshot() {
        MainWindow w;
        w.resize(1920, 1080);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QVERIFY(openAndWait(w, "branchy_dominators"));
        const ir::NodeId left = nodeNamed(w.model()->graph, "left");
        QVERIFY(w.graphView()->selectNode(left));
        w.graphView()->showReadableOverview();
        w.dominatorTreeView()->treeView()->showReadableOverview();
        QCoreApplication::processEvents();
        const QString path = QString(PASSLENS_SCREENSHOT_DIR) + "/dominator_tree.png";
        QVERIFY(w.grab().save(path));
        QCOMPARE(QImage(path).size(), QSize(1920, 1080));
        PASSLENS_VERIFY_DRAWN(path);
    }
};

QTEST_MAIN(AnalysisViewsTest)
#include "test_analysis_views.moc"
