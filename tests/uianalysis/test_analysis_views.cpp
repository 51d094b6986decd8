// The analysis views on the offscreen platform: the dominator tree draws one box per node, its
// selection is linked both ways with the graph view, and selecting a node highlights exactly the
// nodes between it and its immediate post-dominator.
#include <QDir>
#include <QSignalSpy>
#include <QtTest>
#include <algorithm>
#include <set>

#include "MainWindow.h"
#include "analysis/DominatorPath.h"
#include "analysis/DominatorTreeView.h"
#include "analysis/GraphHighlighter.h"
#include "examples/Examples.h"
#include "graph/GraphItems.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"

using namespace passlens;
using passlens::ui::DominatorTreeView;
using passlens::ui::GraphView;
using passlens::ui::MainWindow;

namespace {

std::shared_ptr<const ir::Model> example(const char* id) {
    const auto* ex = examples::find(id);
    return ex ? std::make_shared<const ir::Model>(ex->build()) : nullptr;
}

ir::NodeId nodeNamed(const ir::Graph& g, const char* name) { return g.findNode(name).value_or(ir::kNone); }

/// Opens an example in a fresh window and waits until both the graph and its tree are drawn.
bool openAndWait(MainWindow& w, const char* id) {
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
    }
};

QTEST_MAIN(AnalysisViewsTest)
#include "test_analysis_views.moc"
