#include "analysis/DominatorTreeView.h"

#include <QButtonGroup>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>
#include <QVBoxLayout>

#include "analysis/DominatorPath.h"
#include "graph/GraphView.h"
#include "graph/LayoutJob.h"
#include "layout/DominatorTreeDisplay.h"

namespace passlens::ui {

DominatorTreeView::DominatorTreeView(QWidget* parent) : QWidget(parent), view_(new GraphView(this)) {
    postButton_ = new QToolButton(this);
    postButton_->setText(tr("Post-dominators"));
    postButton_->setToolTip(tr("Each node hangs under its immediate post-dominator: the first node every path from it to the outputs passes"));
    domButton_ = new QToolButton(this);
    domButton_->setText(tr("Dominators"));
    domButton_->setToolTip(tr("Each node hangs under its immediate dominator: the last node every path from the inputs to it passes"));
    for (QToolButton* b : {postButton_, domButton_}) {
        b->setCheckable(true);
        b->setAutoRaise(true);
    }
    auto* group = new QButtonGroup(this);
    group->addButton(postButton_);
    group->addButton(domButton_);
    postButton_->setChecked(true);
    connect(postButton_, &QToolButton::toggled, this, [this](bool on) { setPostDominators(on); });
    status_ = new QLabel(this);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 2);
    bar->addWidget(postButton_);
    bar->addWidget(domButton_);
    bar->addSpacing(8);
    bar->addWidget(status_, 1);
    auto* fit = new QToolButton(this);
    fit->setObjectName("fitTreeButton");
    fit->setText(tr("Fit"));
    fit->setToolTip(tr("Show the whole tree"));
    fit->setAutoRaise(true);
    connect(fit, &QToolButton::clicked, view_, &GraphView::fitAll);
    bar->addWidget(fit);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addLayout(bar);
    layout->addWidget(view_, 1);
    view_->setMinimapVisible(false);
    view_->setLegendVisible(false);

    connect(view_, &GraphView::nodeSelected, this, &DominatorTreeView::onTreeSelection);
}

DominatorTreeView::~DominatorTreeView() { view_->disconnect(this); }

void DominatorTreeView::setGraph(SnapshotPtr graphSnapshot) {
    graph_ = std::move(graphSnapshot);
    current_ = ir::kNone;
    start();
}

void DominatorTreeView::setPostDominators(bool post) {
    if (post_ == post) return;
    post_ = post;
    {
        const QSignalBlocker a(postButton_), b(domButton_);
        postButton_->setChecked(post);
        domButton_->setChecked(!post);
    }
    start();
}

void DominatorTreeView::start() {
    treeJob_.cancel();
    tree_.reset();
    partial_ = false;
    deferred_ = false;
    view_->setSnapshot(nullptr);
    if (!graph_) {
        status_->clear();
        return;
    }
    // A large model's tree (seconds of work, thousands of boxes) waits until someone looks at it.
    if (graph_->hierarchy() && !isVisible()) {
        deferred_ = true;
        status_->setText(tr("The tree is built when this dock is shown."));
        return;
    }
    status_->setText(tr("Building the tree…"));
    launch(nullptr, current_);
}

void DominatorTreeView::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    // The dock changed shape (tall ⇄ wide): lay the tree out the other way round.
    if (tree_ && (width() > 2 * height()) != leftToRight_) launch(tree_, current_);
}

void DominatorTreeView::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    if (deferred_) start();
}

void DominatorTreeView::launch(std::shared_ptr<const analysis::DominatorTree> tree, ir::NodeId focus) {
    // The tree and its layout run in the pool; Graphviz calls are serialized by core/layout.
    // Models drawn through their hierarchy get a partial tree; smaller ones the whole tree.
    const size_t maxBoxes = graph_->hierarchy() ? kMaxTreeBoxes : 0;
    // A wide, short dock (the bottom one) gets the tree left to right: its long chains run along
    // the long side.
    leftToRight_ = width() > 2 * height();
    treeJob_.request([graph = graph_, post = post_, sizer = nodeBoxSizer(), tree, focus, maxBoxes, leftToRight = leftToRight_](const JobControl&) -> Result {
        Result r;
        try {
            r.tree = tree ? tree : std::make_shared<const analysis::DominatorTree>(analysis::DominatorTree::build(*graph->graph, post));
            auto drawing = std::make_shared<GraphSnapshot>();
            drawing->model = graph->model;
            drawing->graph = graph->graph;
            drawing->display = layout::buildDominatorTreeDisplay(*graph->graph, *r.tree, {.maxBoxes = maxBoxes, .focus = focus});
            auto request = layout::toLayoutRequest(drawing->display, sizer);
            request.options.leftToRight = leftToRight;
            drawing->layout = layout::layoutOrFallBack(request);
            r.drawing = std::move(drawing);
        } catch (const std::exception& e) {
            r.error = QString::fromStdString(e.what());
        }
        return r;
    }, [this](Result r) { onFinished(std::move(r)); });  // a newer request drops this result
}

void DominatorTreeView::onFinished(Result r) {
    if (!r.error.isEmpty()) {
        status_->setText(tr("No tree: %1").arg(r.error));
        return;
    }
    tree_ = r.tree;
    partial_ = graph_->hierarchy() && r.drawing->display.opBoxCount >= kMaxTreeBoxes &&
               r.drawing->display.opBoxCount < tree_->nodes().size();
    view_->setSnapshot(r.drawing);
    const QString root = post_ ? tr("exit") : tr("entry");
    if (partial_)
        status_->setText(tr("%1 of %2 nodes, around the selection · root: virtual %3 · laid out in %4 s")
                             .arg(r.drawing->display.opBoxCount).arg(tree_->nodes().size()).arg(root)
                             .arg(r.drawing->layout.seconds, 0, 'f', 2));
    else
        status_->setText(tr("%1 nodes · root: virtual %2 · laid out in %3 s")
                             .arg(r.drawing->display.opBoxCount).arg(root)
                             .arg(r.drawing->layout.seconds, 0, 'f', 2));
    emit treeReady();
    // A selection made while the tree was being built.
    if (current_ != ir::kNone) {
        const QSignalBlocker block(view_);
        view_->selectNode(current_);
    }
    announce();
}

std::vector<ir::NodeId> DominatorTreeView::pathFor(ir::NodeId n) const {
    if (!tree_ || !graph_ || n == ir::kNone || !graph_->graph->hasNode(n)) return {};
    return analysis::pathToImmediateDominator(*graph_->graph, *tree_, n);
}

void DominatorTreeView::selectNode(ir::NodeId id) {
    if (id == current_) return;
    current_ = id;
    syncing_ = true;
    const bool drawn = id != ir::kNone && view_->selectNode(id);
    if (!drawn) view_->scene()->clearSelection();
    syncing_ = false;
    // A partial drawing is redrawn around a node it does not hold (the tree itself is kept).
    if (!drawn && partial_ && tree_ && graph_->graph->hasNode(id)) {
        launch(tree_, id);
    }
    announce();
}

void DominatorTreeView::onTreeSelection(ir::NodeId id) {
    if (syncing_ || id == current_) return;
    if (id == ir::kNone) return;  // the virtual root or a click on empty space: keep the graph's selection
    current_ = id;
    emit nodeSelected(id);
    announce();
}

void DominatorTreeView::announce() {
    if (!tree_) return;
    view_->clearEdgeStyles();
    if (current_ == ir::kNone || !graph_->graph->hasNode(current_)) {
        emit pathChanged(ir::kNone, ir::kNone, {}, post_);
        return;
    }
    const ir::NodeId dominator = tree_->idom(current_);
    // The tree edge from the immediate (post-)dominator, in the path highlight's color.
    view_->setEdgeStyle(dominator == ir::kNone ? layout::kVirtualRootKey : dominator, current_,
                        EdgeStyle{QColor("#7c3aed"), 3.0, false});
    emit pathChanged(current_, dominator, pathFor(current_), post_);
}

}  // namespace passlens::ui
