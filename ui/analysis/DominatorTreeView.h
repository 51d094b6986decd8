#pragma once
// The post-dominator (or dominator) tree of the graph a GraphView shows, drawn with Graphviz in its
// own GraphView (same boxes and colors, keyed by NodeId). Building and laying out the tree run off
// the GUI thread. Selection is linked by signals only: selectNode() in, nodeSelected() out, and
// pathChanged() names the nodes between the selected node and its immediate (post-)dominator.
// Large trees are drawn in part, around the selected node (kMaxTreeBoxes boxes), and the tree of a
// large model (one drawn through its hierarchy) is only built once the dock is on screen.
#include <QWidget>
#include <memory>
#include <vector>

#include "LatestJob.h"
#include "analysis/Dominators.h"
#include "graph/GraphSnapshot.h"

class QLabel;
class QToolButton;

namespace passlens::ui {

class GraphView;

/// Most boxes the tree's drawing holds on a large model (one drawn through its hierarchy); a
/// larger tree is drawn around the selected node.
inline constexpr size_t kMaxTreeBoxes = 400;

class DominatorTreeView : public QWidget {
    Q_OBJECT
public:
    explicit DominatorTreeView(QWidget* parent = nullptr);
    ~DominatorTreeView() override;

    /// The graph whose tree to show: the snapshot the graph view shows (nullptr clears).
    void setGraph(SnapshotPtr graphSnapshot);
    void setPostDominators(bool post);
    bool postDominators() const { return post_; }

    bool busy() const { return treeJob_.isBusy(); }  ///< until the newest tree is shown
    GraphView* treeView() const { return view_; }
    /// The tree on screen (nullptr while none is shown).
    std::shared_ptr<const analysis::DominatorTree> tree() const { return tree_; }
    ir::NodeId currentNode() const { return current_; }
    /// True when the drawing holds only part of the tree (see kMaxTreeBoxes).
    bool partial() const { return partial_; }
    /// Nodes between `n` and its immediate (post-)dominator in the shown tree (empty without one).
    std::vector<ir::NodeId> pathFor(ir::NodeId n) const;

public slots:
    /// Selection made elsewhere (the graph view): selects the box without echoing nodeSelected.
    void selectNode(ir::NodeId id);

signals:
    /// The user selected a node in the tree.
    void nodeSelected(ir::NodeId id);
    /// The current node changed (from either side): `dominator` is its immediate (post-)dominator
    /// (kNone = the virtual exit/entry), `path` the nodes on the paths between them. node == kNone:
    /// nothing selected.
    void pathChanged(ir::NodeId node, ir::NodeId dominator, std::vector<ir::NodeId> path, bool post);
    /// A new tree is on screen.
    void treeReady();

private:
    struct Result {
        SnapshotPtr drawing;
        std::shared_ptr<const analysis::DominatorTree> tree;
        QString error;
    };
    void start();
    /// Builds the tree (when `tree` is null) and draws it around `focus`, in the pool.
    void launch(std::shared_ptr<const analysis::DominatorTree> tree, ir::NodeId focus);
    void onFinished(Result r);
    void showEvent(QShowEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void onTreeSelection(ir::NodeId id);
    void announce();

    GraphView* view_;
    QToolButton* postButton_;
    QToolButton* domButton_;
    QLabel* status_;
    SnapshotPtr graph_;
    bool post_ = true;
    std::shared_ptr<const analysis::DominatorTree> tree_;
    ir::NodeId current_ = ir::kNone;
    bool syncing_ = false;           ///< selecting a box on request: do not echo nodeSelected
    bool partial_ = false;
    bool leftToRight_ = false;       ///< the drawing shown runs left to right
    bool deferred_ = false;          ///< a large model's tree waits until the dock is shown
    LatestJob<Result> treeJob_;
};

}  // namespace passlens::ui
