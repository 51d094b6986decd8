#pragma once
// Interactive view of one graph snapshot: pan/zoom/fit, find, selection, per-node style overrides,
// a legend and a minimap. Keyed by NodeId, so other views (pass stepper, dominator tree, memory)
// can link their selection to it.
#include <QGraphicsView>
#include <QHash>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "graph/GraphSnapshot.h"

class QGraphicsScene;
class QMenu;

namespace passlens::ui {

class NodeItem;
class EdgeItem;
class GhostItem;
class Minimap;

/// Where a view looked: its zoom and the scene point at its center (invalid without a drawing).
struct GraphViewState {
    QTransform transform;
    QPointF center;
    bool valid = false;
};

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    ~GraphView() override;

    /// Replaces the drawing (GUI thread). Keeps style overrides whose node still exists.
    void setSnapshot(SnapshotPtr snapshot);
    SnapshotPtr snapshot() const { return snapshot_; }

    /// Number of operator boxes (not inputs/outputs/constants/groups) currently in the scene.
    int operatorItemCount() const;
    /// Boxes of collapsed groups in the scene, and frames of open ones.
    int groupItemCount() const;
    int groupFrameCount() const { return int(groupFrames_.size()); }
    int itemCountForKey(uint32_t key) const { return items_.count(key); }
    NodeItem* itemForNode(ir::NodeId id) const;

    bool selectNode(ir::NodeId id);   ///< selects and centers; false if the node is not drawn
    /// Selects and centers at the current zoom (a step keeps the user's zoom); false if not drawn.
    bool selectKeepingZoom(ir::NodeId id);
    void centerOnNode(ir::NodeId id);
    /// The part of the scene the viewport shows now.
    QRectF visibleSceneRect() const;
    /// Whether any box (operator, input, output, group) is at least partly on screen.
    bool showsAnyBox() const;
    /// Centers on `sceneRect` unless it is already on screen whole (no jump when it is).
    void bringIntoView(const QRectF& sceneRect);
    /// Zoom and center of the view, to restore after a redraw of the same graph.
    GraphViewState viewState() const;
    void restoreViewState(const GraphViewState& state);
    ir::NodeId selectedNode() const;

    void setNodeStyle(ir::NodeId id, const NodeStyle& style);
    void clearNodeStyle(ir::NodeId id);
    void clearNodeStyles();
    /// The style override set for a node, or null (diff states, highlights).
    const NodeStyle* nodeStyle(ir::NodeId id) const;
    /// Decoration of a collapsed group's box (e.g. the stepper's "3 changed" badge); dropped by
    /// setSnapshot. groupStyle is null for groups without one or not drawn collapsed.
    void setGroupStyle(uint32_t group, const NodeStyle& style);
    const NodeStyle* groupStyle(uint32_t group) const;
    /// Diff mode: boxes without a style override are drawn desaturated, so the marked ones (a
    /// pass step's changes) stand out. Kept across setSnapshot.
    void setDiffMode(bool on);
    bool diffMode() const { return diffMode_; }
    /// Nodes with a style override that are drawn in the current snapshot.
    std::vector<ir::NodeId> styledNodes() const;

    /// Removed nodes drawn as ghosts (see GhostItem); replaced on every call, cleared by
    /// setSnapshot. They are not node items: operatorItemCount() ignores them.
    struct Ghost { ir::NodeId node; QRectF rect; QString title, subtitle; };
    void setGhosts(const std::vector<Ghost>& ghosts, const NodeStyle& style);
    int ghostCount() const { return int(ghosts_.size()); }
    /// The ghosts drawn now: removed node and where it stands (scene coordinates).
    std::vector<std::pair<ir::NodeId, QRectF>> ghostRects() const;

    /// Nodes whose name or op type contains `text` (case-insensitive), in layout order.
    std::vector<ir::NodeId> findNodes(const QString& text) const;
    void setSearchHits(const std::vector<ir::NodeId>& hits);
    /// Nodes drawn with find's highlight now.
    std::vector<ir::NodeId> searchHits() const;

    /// A short line drawn at the top center of the viewport ("before: cse"), with optional
    /// swatches after it, drawn as rings like the diff marks. Empty = none.
    void setCaption(const QString& text, const std::vector<std::pair<QColor, QString>>& swatches = {});
    QString caption() const { return caption_; }
    void setLegendVisible(bool on);
    void setMinimapVisible(bool on);
    bool minimapVisible() const;
    /// Where the overlays sit in viewport coordinates (empty when not drawn). Neither ever covers
    /// the selected box: the minimap moves to the other bottom corner (or hides), the legend to
    /// the other top corner (or is left out), see placeOverlays().
    QRect minimapGeometry() const;
    QRect legendGeometry() const;
    /// The selected box in viewport coordinates (empty without a selection).
    QRect selectedBoxInViewport() const;

    /// Decorates the edges from operator `from` to operator `to` (every value between them);
    /// returns how many drawn edges that styled now. Kept across setSnapshot like node styles.
    int setEdgeStyle(ir::NodeId from, ir::NodeId to, const EdgeStyle& style);
    void clearEdgeStyle(ir::NodeId from, ir::NodeId to);
    void clearEdgeStyles();
    /// Drawn edges from `from` to `to` that carry a style now.
    int styledEdgeCount(ir::NodeId from, ir::NodeId to) const;

    /// Cluster overlay: an outline around each cluster's drawn members, its label on top and its
    /// anchor tagged. Only the selected node's cluster is shown (frames of every cluster overlap
    /// and cover unrelated boxes). Replaced as a whole; setSnapshot drops it (clusters belong to a graph).
    void setClusters(std::vector<NodeCluster> clusters);
    void setClustersVisible(bool on);
    bool clustersVisible() const { return clustersVisible_; }
    /// Cluster frames in the scene (clusters with at least one drawn member), shown or not.
    int clusterOverlayCount() const { return static_cast<int>(clusterItems_.size()); }
    /// Cluster frames on screen now: the selected node's, while the overlay is on.
    int visibleClusterOverlayCount() const;
    const std::vector<NodeCluster>& clusters() const { return clusters_; }

    /// The node's context menu, filled by whoever listens to nodeContextMenuRequested (the caller
    /// owns it). The view calls this on a right-click; tests call it directly.
    QMenu* createNodeContextMenu(ir::NodeId id, QWidget* parent);

public slots:
    void zoomIn();
    void zoomOut();
    void fitAll();
    /// The drawing at `scale` (1.0 = 100%), centered.
    void showAtScale(double scale);
    /// The first view of a new drawing: fitted when it stays readable, else a readable zoom on the
    /// graph inputs (chooseFirstView in graph/FirstView.h).
    void showReadableOverview();

signals:
    void nodeSelected(ir::NodeId id);        ///< kNone when the selection is cleared
    void valueSelected(ir::ValueId id);      ///< an input/output/constant box was selected
    void subgraphRequested(ir::NodeId id);   ///< double-click on an If/Loop/Scan or a model-local function call
    /// Double-click on a collapsed group's box (expand) or on an open group's frame (collapse).
    void groupToggleRequested(uint32_t group, bool expand);
    void zoomChanged(double factor);
    /// A node's context menu is being built: add actions to `menu` (synchronously).
    void nodeContextMenuRequested(ir::NodeId id, QMenu* menu);
    /// setSnapshot replaced the drawing (overlays and highlights of the old one are gone).
    void snapshotReplaced();

protected:
    void wheelEvent(QWheelEvent* e) override;
    void mouseDoubleClickEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;
    void drawForeground(QPainter* p, const QRectF& rect) override;
    void scrollContentsBy(int dx, int dy) override;
    void contextMenuEvent(QContextMenuEvent* e) override;

private:
    void onSelectionChanged();
    void scaleBy(double factor);
    void positionOverlays();
    void updateMinimapVisibility();
    /// Puts the minimap and the legend in corners away from the selected box.
    void placeOverlays();
    /// The legend's size for the categories drawn now (empty when there is nothing to list).
    QSize legendSize() const;
    /// Whether a graph input's box lies under `viewportRect` (the legend keeps off the inputs).
    bool coversGraphInput(const QRect& viewportRect) const;
    void drawCaption(QPainter* p);
    /// Scene units kept free above the drawing so the caption does not cover the first boxes.
    double captionRoom() const { return caption_.isEmpty() ? 0.0 : 44.0; }
    NodeItem* nodeItemAt(const QPoint& viewPos) const;
    /// Whether a double-click opens a body: an If/Loop/Scan, or a call of a model-local function.
    bool opensBody(ir::NodeId id) const;
    void rebuildClusterItems();
    void addGroupFrames();

    QGraphicsScene* scene_;
    SnapshotPtr snapshot_;
    std::unordered_map<uint32_t, NodeItem*> items_;  ///< by display key
    std::unordered_map<uint32_t, std::vector<EdgeItem*>> edgesByNode_;
    std::unordered_map<ir::NodeId, NodeStyle> styles_;
    std::unordered_map<uint32_t, NodeStyle> groupStyles_;  ///< by group id, this drawing only
    std::vector<NodeItem*> searchHits_;
    std::vector<GhostItem*> ghosts_;
    Minimap* minimap_ = nullptr;
    bool legendVisible_ = true;
    QRect legendRect_;               ///< where the legend is drawn now (viewport), empty = not drawn
    std::vector<layout::OpCategory> presentCategories_;  ///< the legend's rows
    std::unordered_set<uint32_t> inputKeys_;  ///< display keys of the graph-input boxes
    bool minimapCoveredSelection_ = false;  ///< hidden only because the selection was under it
    bool minimapWanted_ = true;
    QString caption_;
    std::vector<std::pair<QColor, QString>> captionSwatches_;
    std::map<std::pair<ir::NodeId, ir::NodeId>, EdgeStyle> edgeStyles_;
    std::vector<NodeCluster> clusters_;
    std::vector<QGraphicsItem*> clusterItems_;  ///< frames; their labels and anchor tags live in clusterTags_
    std::vector<QGraphicsItem*> clusterTags_;
    std::vector<size_t> clusterItemOwner_, clusterTagOwner_;  ///< index into clusters_, per item
    /// Shows the frame, label and tag of the selected node's cluster only (when the overlay is on).
    void updateClusterVisibility();
    std::vector<std::pair<QGraphicsItem*, uint32_t>> groupFrames_;  ///< frame item, group id
    bool clustersVisible_ = false;
    bool diffMode_ = false;
};

}  // namespace passlens::ui
