#include "graph/GraphView.h"

#include <QContextMenuEvent>
#include <QFontMetricsF>
#include <QGraphicsScene>
#include <QMenu>
#include <QPainter>
#include <QScrollBar>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>

#include "graph/FirstView.h"
#include "graph/GraphItems.h"
#include "graph/LayoutJob.h"
#include "graph/Minimap.h"
#include "layout/Clusters.h"
#include "layout/EdgeLabels.h"

namespace passlens::ui {

using layout::DisplayNode;

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), scene_(new QGraphicsScene(this)) {
    setScene(scene_);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(ScrollHandDrag);
    setTransformationAnchor(AnchorUnderMouse);
    setViewportUpdateMode(SmartViewportUpdate);
    setOptimizationFlags(DontSavePainterState | DontAdjustForAntialiasing);
    setBackgroundBrush(QColor("#fbfbfd"));
    setFrameShape(QFrame::NoFrame);
    scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
    minimap_ = new Minimap(this, this);
    minimap_->resize(220, 160);
    positionOverlays();
}

namespace {

// Edge labels beside their edges where they cover no box and no other label (measured in the
// font they are drawn with); the rest show while their edge is highlighted.
std::vector<std::optional<layout::Rect>> placeLabels(const layout::DisplayGraph& dg, const layout::LayoutResult& lr) {
    const QFontMetricsF fm(nodeTextFont());
    std::vector<layout::LabelSize> sizes(dg.edges.size());
    for (size_t i = 0; i < dg.edges.size(); ++i)
        if (!dg.edges[i].label.empty())
            sizes[i] = {fm.horizontalAdvance(QString::fromStdString(dg.edges[i].label)) + 2, fm.height()};
    std::vector<layout::Rect> boxes;
    boxes.reserve(lr.boxes.size());
    for (const auto& b : lr.boxes) boxes.push_back(b.rect);
    return layout::placeEdgeLabels(lr.edges, sizes, boxes);
}

}  // namespace

GraphView::~GraphView() {
    // The scene deselects its items while it dies; nobody may hear about that any more.
    disconnect(scene_, nullptr, this, nullptr);
}

void GraphView::setSnapshot(SnapshotPtr snap) {
    const QSignalBlocker block(scene_);
    scene_->clear();
    items_.clear();
    edgesByNode_.clear();
    searchHits_.clear();
    ghosts_.clear();
    clusterItems_.clear();
    clusterTags_.clear();
    clusterItemOwner_.clear();
    clusterTagOwner_.clear();
    clusters_.clear();
    groupFrames_.clear();
    groupStyles_.clear();
    inputKeys_.clear();
    snapshot_ = std::move(snap);
    if (!snapshot_) {
        updateMinimapVisibility();
        emit snapshotReplaced();
        return;
    }
    const auto& dg = snapshot_->display;
    const auto& lr = snapshot_->layout;
    for (size_t i = 0; i < dg.nodes.size(); ++i) {
        const auto& r = lr.boxes[i].rect;
        auto* item = new NodeItem(dg.nodes[i], QRectF(r.x, r.y, r.width, r.height));
        item->setMuted(diffMode_);
        scene_->addItem(item);
        items_[dg.nodes[i].key] = item;
        if (dg.nodes[i].kind == DisplayNode::Kind::Op) {
            if (const auto& domain = snapshot_->graph->node(dg.nodes[i].node).domain; !domain.empty() && domain != "ai.onnx")
                item->setDomainTag(domain == "com.microsoft" ? QStringLiteral("ms") : QString::fromStdString(domain.substr(domain.rfind('.') + 1)));
            auto it = styles_.find(dg.nodes[i].node);
            if (it != styles_.end()) item->setStyleOverride(&it->second);
        }
    }
    const auto labelRects = placeLabels(dg, lr);
    for (size_t i = 0; i < dg.edges.size(); ++i) {
        std::optional<QRectF> labelRect;
        if (const auto& r = labelRects[i]) labelRect = QRectF(r->x, r->y, r->width, r->height);
        auto* item = new EdgeItem(lr.edges[i], QString::fromStdString(dg.edges[i].label), labelRect);
        // The label shortens dims ("?" for made-up names like unk__9); the tooltip has them raw.
        if (const ir::ValueId v = dg.edges[i].value; v != ir::kNone && snapshot_->graph->hasValue(v)) {
            const auto& value = snapshot_->graph->value(v);
            item->setToolTip(QString::fromStdString(value.name + "  " + (value.type.shape ? value.type.shape->toString() : std::string("rank unknown"))));
        }
        scene_->addItem(item);
        edgesByNode_[dg.edges[i].from].push_back(item);
        edgesByNode_[dg.edges[i].to].push_back(item);
        if (auto it = edgeStyles_.find({dg.edges[i].from, dg.edges[i].to}); it != edgeStyles_.end())
            item->setStyleOverride(&it->second);
    }
    addGroupFrames();
    for (const auto& n : dg.nodes)
        if (n.kind == DisplayNode::Kind::Input) inputKeys_.insert(n.key);
    presentCategories_.clear();
    for (auto c : layout::allCategories())
        for (const auto& n : dg.nodes)
            if (n.category == c) { presentCategories_.push_back(c); break; }
    const auto& b = lr.bounds;
    scene_->setSceneRect(QRectF(b.x, b.y, b.width, b.height).adjusted(-40, -40 - captionRoom(), 40, 40));
    minimap_->resize(Minimap::sizeFor(scene_->sceneRect().size(), viewport()->size()));
    minimap_->refit();
    showReadableOverview();
    emit snapshotReplaced();
}

void GraphView::showReadableOverview() {
    if (!snapshot_) return;
    const FirstView first = chooseFirstView(snapshot_->display, snapshot_->layout, viewport()->size(), captionRoom());
    if (first.fitWhole) return fitAll();
    resetTransform();
    scale(first.scale, first.scale);
    centerOn(first.center);
    minimap_->viewport()->update();
    updateMinimapVisibility();
    emit zoomChanged(first.scale);
}

QRectF GraphView::visibleSceneRect() const { return mapToScene(viewport()->rect()).boundingRect(); }

bool GraphView::showsAnyBox() const {
    for (QGraphicsItem* i : scene_->items(visibleSceneRect(), Qt::IntersectsItemBoundingRect))
        if (i->type() == NodeItem::Type) return true;
    return false;
}

void GraphView::bringIntoView(const QRectF& sceneRect) {
    if (visibleSceneRect().contains(sceneRect)) return;
    centerOn(sceneRect.center());
    minimap_->viewport()->update();
    updateMinimapVisibility();
}

GraphViewState GraphView::viewState() const {
    if (!snapshot_) return {};
    return {transform(), visibleSceneRect().center(), true};
}

void GraphView::restoreViewState(const GraphViewState& state) {
    if (!state.valid) return;
    setTransform(state.transform);
    centerOn(state.center);
    minimap_->viewport()->update();
    updateMinimapVisibility();
    emit zoomChanged(transform().m11());
}

bool GraphView::selectKeepingZoom(ir::NodeId id) {
    NodeItem* item = itemForNode(id);
    if (!item) return false;
    scene_->clearSelection();
    item->setSelected(true);
    centerOn(item);
    minimap_->viewport()->update();
    updateMinimapVisibility();
    return true;
}

int GraphView::operatorItemCount() const {
    int n = 0;
    for (const auto& [key, item] : items_)
        if (layout::isOpKey(key)) ++n;
    return n;
}

int GraphView::groupItemCount() const {
    int n = 0;
    for (const auto& [key, item] : items_)
        if (layout::isGroupKey(key)) ++n;
    return n;
}

void GraphView::addGroupFrames() {
    // Open groups: a translucent frame (depth-shaded) with its path on top, under boxes and edges.
    static const char* palette[] = {"#64748b", "#0d9488", "#7c3aed", "#2563eb", "#ca8a04"};
    for (const auto& f : snapshot_->frames) {
        const QRectF r(f.rect.x, f.rect.y, f.rect.width, f.rect.height);
        const QColor color(palette[size_t(f.depth) % std::size(palette)]);
        auto* frame = new ClusterItem(r, QString::fromStdString(f.label), color, 12);
        frame->setZValue(-2 + 0.01 * f.depth);
        frame->setToolTip(tr("%1\nDouble-click the frame to collapse it").arg(QString::fromStdString(f.label)));
        scene_->addItem(frame);
        groupFrames_.push_back({frame, f.group});
        auto* label = new ClusterLabelItem(r.topLeft() + QPointF(8, 4), r.width() - 16, QString::fromStdString(f.label), color);
        label->setZValue(-1.9 + 0.01 * f.depth);
        scene_->addItem(label);
    }
}

NodeItem* GraphView::itemForNode(ir::NodeId id) const {
    if (id == ir::kNone || !layout::isOpKey(id)) return nullptr;
    auto it = items_.find(id);
    return it == items_.end() ? nullptr : it->second;
}

bool GraphView::selectNode(ir::NodeId id) {
    NodeItem* item = itemForNode(id);
    if (!item) return false;
    scene_->clearSelection();
    item->setSelected(true);
    centerOnNode(id);
    return true;
}

void GraphView::centerOnNode(ir::NodeId id) {
    if (NodeItem* item = itemForNode(id)) {
        // Zoom in to a readable scale if we are far out, then center.
        if (transform().m11() < 0.8) {
            resetTransform();
            scale(1.0, 1.0);
            emit zoomChanged(1.0);
        }
        centerOn(item);
        minimap_->viewport()->update();
        updateMinimapVisibility();
    }
}

ir::NodeId GraphView::selectedNode() const {
    for (QGraphicsItem* it : scene_->selectedItems())
        if (it->type() == NodeItem::Type) {
            uint32_t key = static_cast<NodeItem*>(it)->key();
            if (layout::isOpKey(key)) return key;
        }
    return ir::kNone;
}

void GraphView::onSelectionChanged() {
    for (auto& [key, edges] : edgesByNode_)
        for (EdgeItem* e : edges) e->setHighlighted(false);
    placeOverlays();
    updateClusterVisibility();
    auto sel = scene_->selectedItems();
    if (sel.isEmpty()) {
        emit nodeSelected(ir::kNone);
        return;
    }
    auto* item = qgraphicsitem_cast<NodeItem*>(sel.front());
    if (!item) return;
    if (auto it = edgesByNode_.find(item->key()); it != edgesByNode_.end())
        for (EdgeItem* e : it->second) e->setHighlighted(true);
    uint32_t key = item->key();
    if (layout::isGroupKey(key)) emit nodeSelected(ir::kNone);
    else if (layout::isOpKey(key)) emit nodeSelected(key);
    else emit valueSelected(snapshot_->display.valueOfKey(key));  // copies of a shared constant too
}

void GraphView::setNodeStyle(ir::NodeId id, const NodeStyle& style) {
    styles_[id] = style;
    if (NodeItem* item = itemForNode(id)) item->setStyleOverride(&styles_[id]);
}

void GraphView::setGroupStyle(uint32_t group, const NodeStyle& style) {
    auto it = items_.find(layout::groupKey(group));
    if (it == items_.end()) return;
    groupStyles_[group] = style;
    it->second->setStyleOverride(&groupStyles_[group]);
}

const NodeStyle* GraphView::groupStyle(uint32_t group) const {
    auto it = groupStyles_.find(group);
    return it == groupStyles_.end() ? nullptr : &it->second;
}

void GraphView::clearNodeStyle(ir::NodeId id) {
    styles_.erase(id);
    if (NodeItem* item = itemForNode(id)) item->setStyleOverride(nullptr);
}

int GraphView::setEdgeStyle(ir::NodeId from, ir::NodeId to, const EdgeStyle& style) {
    const EdgeStyle& kept = edgeStyles_[{from, to}] = style;
    int n = 0;
    if (auto it = edgesByNode_.find(from); it != edgesByNode_.end())
        for (EdgeItem* e : it->second)
            if (e->from() == from && e->to() == to) { e->setStyleOverride(&kept); ++n; }
    return n;
}

void GraphView::clearEdgeStyle(ir::NodeId from, ir::NodeId to) {
    edgeStyles_.erase({from, to});
    if (auto it = edgesByNode_.find(from); it != edgesByNode_.end())
        for (EdgeItem* e : it->second)
            if (e->from() == from && e->to() == to) e->setStyleOverride(nullptr);
}

void GraphView::clearEdgeStyles() {
    for (const auto& [ends, style] : edgeStyles_)
        if (auto it = edgesByNode_.find(ends.first); it != edgesByNode_.end())
            for (EdgeItem* e : it->second)
                if (e->to() == ends.second) e->setStyleOverride(nullptr);
    edgeStyles_.clear();
}

int GraphView::styledEdgeCount(ir::NodeId from, ir::NodeId to) const {
    int n = 0;
    if (auto it = edgesByNode_.find(from); it != edgesByNode_.end())
        for (EdgeItem* e : it->second) n += e->from() == from && e->to() == to && e->hasStyleOverride();
    return n;
}

void GraphView::setClusters(std::vector<NodeCluster> clusters) {
    clusters_ = std::move(clusters);
    rebuildClusterItems();
}

void GraphView::rebuildClusterItems() {
    for (QGraphicsItem* i : clusterItems_) delete i;
    for (QGraphicsItem* i : clusterTags_) delete i;
    clusterItems_.clear();
    clusterTags_.clear();
    clusterItemOwner_.clear();
    clusterTagOwner_.clear();
    // Distinct hues that stay readable as outlines next to the category colors.
    static const char* palette[] = {"#7c3aed", "#0d9488", "#db2777", "#2563eb", "#ca8a04", "#16a34a", "#ea580c"};
    // Label band: the label plus room for the anchor tag that straddles the top member's border.
    const double labelHeight = QFontMetricsF(nodeTextFont()).height() + 10;
    for (size_t c = 0; c < clusters_.size(); ++c) {
        const NodeCluster& cl = clusters_[c];
        std::vector<layout::Rect> rects;
        for (ir::NodeId m : cl.members)
            if (NodeItem* item = itemForNode(m)) {
                const QRectF r = item->boundingRect().adjusted(4, 4, -4, -4);  // the box itself
                rects.push_back({r.x(), r.y(), r.width(), r.height()});
            }
        auto frame = layout::clusterFrame(rects, 10, labelHeight);
        if (!frame) continue;
        const QColor color = cl.color.isValid() ? cl.color : QColor(palette[c % std::size(palette)]);
        const auto& f = frame->frame;
        // Outline only: a fill would tint the boxes and edge labels inside.
        auto* item = new ClusterItem(QRectF(f.x, f.y, f.width, f.height), cl.label, color, 0);
        scene_->addItem(item);
        clusterItems_.push_back(item);
        clusterItemOwner_.push_back(c);
        auto* label = new ClusterLabelItem(QPointF(frame->labelAnchor.x, frame->labelAnchor.y),
                                           std::max(f.right() - frame->labelAnchor.x - 6, 130.0), cl.label, color);
        scene_->addItem(label);
        clusterTags_.push_back(label);
        clusterTagOwner_.push_back(c);
        if (NodeItem* anchor = itemForNode(cl.anchor)) {
            auto* tag = new TagItem(anchor->boundingRect().adjusted(4, 4, -4, -4), QObject::tr("anchor"), color);
            scene_->addItem(tag);
            clusterTags_.push_back(tag);
            clusterTagOwner_.push_back(c);
        }
    }
    updateClusterVisibility();
}

void GraphView::updateClusterVisibility() {
    const ir::NodeId selected = clustersVisible_ ? selectedNode() : ir::kNone;
    auto shown = [&](size_t c) {
        const auto& m = clusters_[c].members;
        return selected != ir::kNone && std::find(m.begin(), m.end(), selected) != m.end();
    };
    for (size_t i = 0; i < clusterItems_.size(); ++i) clusterItems_[i]->setVisible(shown(clusterItemOwner_[i]));
    for (size_t i = 0; i < clusterTags_.size(); ++i) clusterTags_[i]->setVisible(shown(clusterTagOwner_[i]));
}

int GraphView::visibleClusterOverlayCount() const {
    return int(std::count_if(clusterItems_.begin(), clusterItems_.end(), [](QGraphicsItem* i) { return i->isVisible(); }));
}

void GraphView::setClustersVisible(bool on) {
    clustersVisible_ = on;
    updateClusterVisibility();
}

QMenu* GraphView::createNodeContextMenu(ir::NodeId id, QWidget* parent) {
    auto* menu = new QMenu(parent);
    if (!snapshot_ || !itemForNode(id)) return menu;
    menu->addAction(tr("Center on Node"), this, [this, id] { centerOnNode(id); });
    emit nodeContextMenuRequested(id, menu);
    return menu;
}

NodeItem* GraphView::nodeItemAt(const QPoint& viewPos) const {
    for (QGraphicsItem* i : items(viewPos))
        if (auto* n = qgraphicsitem_cast<NodeItem*>(i)) return n;
    return nullptr;
}

void GraphView::contextMenuEvent(QContextMenuEvent* e) {
    NodeItem* item = nodeItemAt(e->pos());
    if (!item || !layout::isOpKey(item->key())) return QGraphicsView::contextMenuEvent(e);
    scene_->clearSelection();
    item->setSelected(true);
    std::unique_ptr<QMenu> menu(createNodeContextMenu(item->key(), this));
    menu->exec(e->globalPos());
    e->accept();
}

void GraphView::clearNodeStyles() {
    for (auto& [id, s] : styles_)
        if (NodeItem* item = itemForNode(id)) item->setStyleOverride(nullptr);
    styles_.clear();
}

void GraphView::setGhosts(const std::vector<Ghost>& ghosts, const NodeStyle& style) {
    for (GhostItem* g : ghosts_) {
        scene_->removeItem(g);
        delete g;
    }
    ghosts_.clear();
    for (const auto& g : ghosts) {
        auto* item = new GhostItem(g.node, g.rect, g.title, g.subtitle, style);
        scene_->addItem(item);
        ghosts_.push_back(item);
    }
    if (snapshot_ && !ghosts_.empty()) {  // ghosts may stand right of the drawing: keep them reachable
        QRectF r = scene_->sceneRect();
        for (GhostItem* g : ghosts_) r = r.united(g->sceneBoundingRect().adjusted(-40, -40, 40, 40));
        scene_->setSceneRect(r);
    }
}

std::vector<std::pair<ir::NodeId, QRectF>> GraphView::ghostRects() const {
    std::vector<std::pair<ir::NodeId, QRectF>> out;
    for (const GhostItem* g : ghosts_) out.emplace_back(g->node(), g->sceneBoundingRect());
    return out;
}

const NodeStyle* GraphView::nodeStyle(ir::NodeId id) const {
    auto it = styles_.find(id);
    return it == styles_.end() ? nullptr : &it->second;
}

std::vector<ir::NodeId> GraphView::styledNodes() const {
    std::vector<ir::NodeId> out;
    for (const auto& [id, s] : styles_)
        if (itemForNode(id)) out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<ir::NodeId> GraphView::findNodes(const QString& text) const {
    std::vector<ir::NodeId> out;
    if (!snapshot_ || text.isEmpty()) return out;
    const auto& g = *snapshot_->graph;
    // Drawn through a hierarchy: every node counts, also those inside collapsed groups.
    const auto& nodes = snapshot_->layouter ? snapshot_->layouter->full().nodes : snapshot_->display.nodes;
    // "op:Softmax" finds nodes of exactly that op type (a plain "Attention" also matches every node
    // whose path contains the word).
    const bool byType = text.startsWith(QLatin1String("op:"), Qt::CaseInsensitive);
    const QString wanted = byType ? text.mid(3).trimmed() : text;
    for (const auto& dn : nodes) {
        if (dn.kind != DisplayNode::Kind::Op) continue;
        const auto& n = g.node(dn.node);
        const QString op = QString::fromStdString(n.opType);
        const bool hit = byType ? op.compare(wanted, Qt::CaseInsensitive) == 0
                                : QString::fromStdString(n.name).contains(text, Qt::CaseInsensitive) || op.contains(text, Qt::CaseInsensitive);
        if (hit) out.push_back(dn.node);
    }
    if (snapshot_->layouter) return out;  // model order: hidden nodes have no place to sort by
    // Reading order: top to bottom, then left to right.
    std::stable_sort(out.begin(), out.end(), [&](ir::NodeId a, ir::NodeId b) {
        QPointF pa = items_.at(a)->boundingRect().center(), pb = items_.at(b)->boundingRect().center();
        return pa.y() != pb.y() ? pa.y() < pb.y() : pa.x() < pb.x();
    });
    return out;
}

std::vector<ir::NodeId> GraphView::searchHits() const {
    std::vector<ir::NodeId> out;
    for (const NodeItem* i : searchHits_)
        if (layout::isOpKey(i->key())) out.push_back(i->key());
    return out;
}

void GraphView::setDiffMode(bool on) {
    if (diffMode_ == on) return;
    diffMode_ = on;
    for (auto& [key, item] : items_) item->setMuted(on);
}

void GraphView::setSearchHits(const std::vector<ir::NodeId>& hits) {
    for (NodeItem* i : searchHits_) i->setSearchHit(false);
    searchHits_.clear();
    for (ir::NodeId id : hits)
        if (NodeItem* i = itemForNode(id)) {
            i->setSearchHit(true);
            searchHits_.push_back(i);
        }
}

void GraphView::setLegendVisible(bool on) {
    legendVisible_ = on;
    placeOverlays();
    viewport()->update();
}

void GraphView::setMinimapVisible(bool on) {
    minimapWanted_ = on;
    updateMinimapVisibility();
}
bool GraphView::minimapVisible() const { return minimap_->isVisible(); }

void GraphView::updateMinimapVisibility() {
    // The overview map only helps when the drawing does not fit; otherwise it hides boxes.
    bool fits = true;
    if (snapshot_) {
        const QRectF shown = mapToScene(viewport()->rect()).boundingRect();
        const auto& b = snapshot_->layout.bounds;
        fits = shown.contains(QRectF(b.x, b.y, b.width, b.height));
    }
    minimap_->setVisible(minimapWanted_ && !fits);
    placeOverlays();
}

bool GraphView::coversGraphInput(const QRect& viewportRect) const {
    if (inputKeys_.empty()) return false;
    for (QGraphicsItem* i : scene_->items(mapToScene(viewportRect).boundingRect(), Qt::IntersectsItemBoundingRect))
        if (i->type() == NodeItem::Type && inputKeys_.count(static_cast<NodeItem*>(i)->key())) return true;
    return false;
}

QRect GraphView::minimapGeometry() const { return minimap_->isVisible() ? minimap_->geometry() : QRect(); }
QRect GraphView::legendGeometry() const { return legendRect_; }

QRect GraphView::selectedBoxInViewport() const {
    for (QGraphicsItem* it : scene_->selectedItems())
        return mapFromScene(it->sceneBoundingRect()).boundingRect();
    return {};
}

void GraphView::placeOverlays() {
    const int margin = 12;
    const QRect sel = selectedBoxInViewport();
    const int w = viewport()->width(), h = viewport()->height();
    // Minimap: bottom right, else bottom left, else hidden while the selection is under both.
    const QRect right(w - minimap_->width() - margin, h - minimap_->height() - margin, minimap_->width(), minimap_->height());
    const QRect left(margin, right.top(), minimap_->width(), minimap_->height());
    const bool mapWanted = minimap_->isVisible() || (minimap_->isHidden() && minimapCoveredSelection_);
    minimapCoveredSelection_ = false;
    if (mapWanted) {
        if (sel.isEmpty() || !sel.intersects(right)) minimap_->move(right.topLeft());
        else if (!sel.intersects(left)) minimap_->move(left.topLeft());
        else { minimap_->hide(); minimapCoveredSelection_ = true; }
        if (!minimapCoveredSelection_ && minimap_->isHidden()) minimap_->show();
    }
    // Legend: top left, else top right, else not drawn.
    QRect legend;
    if (legendVisible_ && snapshot_) {
        const QSize size = legendSize();
        const QRect topLeft(QPoint(margin, margin), size), topRight(QPoint(w - size.width() - margin, margin), size);
        // The selection is never covered; a graph input (the first view starts at them) moves
        // the legend too when the other corner is free of both.
        const bool selLeft = !sel.isEmpty() && sel.intersects(topLeft), selRight = !sel.isEmpty() && sel.intersects(topRight);
        if (!selLeft && !coversGraphInput(topLeft)) legend = topLeft;
        else if (!selRight && !coversGraphInput(topRight)) legend = topRight;
        else if (!selLeft) legend = topLeft;
        else if (!selRight) legend = topRight;
    }
    if (legend != legendRect_) {
        legendRect_ = legend;
        viewport()->update();
    }
}

void GraphView::setCaption(const QString& text, const std::vector<std::pair<QColor, QString>>& swatches) {
    const bool roomChanged = caption_.isEmpty() != text.isEmpty();
    caption_ = text;
    captionSwatches_ = swatches;
    if (roomChanged && snapshot_) {  // make (or drop) room above the drawing for the caption
        const auto& b = snapshot_->layout.bounds;
        scene_->setSceneRect(QRectF(b.x, b.y, b.width, b.height).adjusted(-40, -40 - captionRoom(), 40, 40));
    }
    viewport()->update();
}

void GraphView::drawCaption(QPainter* p) {
    if (caption_.isEmpty()) return;
    p->save();
    p->resetTransform();
    QFont f("DejaVu Sans");
    f.setPixelSize(13);
    f.setBold(true);
    QFont sf("DejaVu Sans");
    sf.setPixelSize(12);
    const QFontMetrics fm(f), sm(sf);
    int w = fm.horizontalAdvance(caption_) + 20;
    for (const auto& [c, label] : captionSwatches_) w += 26 + sm.horizontalAdvance(label);
    const int h = fm.height() + 10;
    const QRect frame((viewport()->width() - w) / 2, 10, w, h);
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(QColor("#c8ccd2"));
    p->setBrush(QColor(255, 255, 255, 240));
    p->drawRoundedRect(frame, 6, 6);
    int x = frame.left() + 10;
    p->setFont(f);
    p->setPen(QColor("#1d2330"));
    p->drawText(QRect(x, frame.top(), fm.horizontalAdvance(caption_), h), Qt::AlignVCenter, caption_);
    x += fm.horizontalAdvance(caption_) + 8;
    p->setFont(sf);
    for (const auto& [c, label] : captionSwatches_) {
        p->setPen(QPen(c, 2.6));  // a ring, as the diff marks the boxes
        p->setBrush(Qt::white);
        p->drawRoundedRect(QRect(x + 4, frame.top() + h / 2 - 6, 14, 12), 3, 3);
        p->setPen(QColor("#1d2330"));
        p->drawText(QRect(x + 22, frame.top(), sm.horizontalAdvance(label) + 2, h), Qt::AlignVCenter, label);
        x += 26 + sm.horizontalAdvance(label);
    }
    p->restore();
}

void GraphView::scaleBy(double factor) {
    const double current = transform().m11();
    const double target = std::clamp(current * factor, 0.02, 6.0);
    scale(target / current, target / current);
    minimap_->viewport()->update();
    updateMinimapVisibility();
    emit zoomChanged(target);
}

void GraphView::zoomIn() { scaleBy(1.25); }
void GraphView::zoomOut() { scaleBy(0.8); }

void GraphView::fitAll() {
    if (!snapshot_) return;
    const auto& b = snapshot_->layout.bounds;
    QRectF r(b.x, b.y, b.width, b.height);
    fitInView(r.adjusted(-20, -20 - captionRoom(), 20, 20), Qt::KeepAspectRatio);
    // Never blow small graphs up past a comfortable reading size.
    if (transform().m11() > 1.6) {
        resetTransform();
        scale(1.6, 1.6);
        centerOn(r.center());
    }
    minimap_->viewport()->update();
    updateMinimapVisibility();
    emit zoomChanged(transform().m11());
}

void GraphView::wheelEvent(QWheelEvent* e) {
    if (e->modifiers() & Qt::ControlModifier || true) {
        const double steps = e->angleDelta().y() / 120.0;
        scaleBy(std::pow(1.15, steps));
        e->accept();
    }
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* e) {
    if (NodeItem* item = nodeItemAt(e->pos())) {
        uint32_t key = item->key();
        if (layout::isGroupKey(key)) {
            emit groupToggleRequested(layout::groupOfKey(key), true);
            return;
        }
        if (layout::isOpKey(key) && snapshot_ && opensBody(key)) {
            emit subgraphRequested(key);
            return;
        }
    } else {
        // The innermost open group's frame under the pointer closes.
        const QPointF at = mapToScene(e->pos());
        const std::pair<QGraphicsItem*, uint32_t>* inner = nullptr;
        for (const auto& f : groupFrames_)
            if (f.first->sceneBoundingRect().contains(at) && (!inner || f.first->zValue() >= inner->first->zValue())) inner = &f;
        if (inner) {
            emit groupToggleRequested(inner->second, false);
            return;
        }
    }
    QGraphicsView::mouseDoubleClickEvent(e);
}

bool GraphView::opensBody(ir::NodeId id) const {
    const ir::Node& n = snapshot_->graph->node(id);
    return n.hasSubgraphs() || (snapshot_->model && snapshot_->model->findFunction(n.domain, n.opType));
}

void GraphView::showAtScale(double scale) {
    if (!snapshot_) return;
    resetTransform();
    this->scale(scale, scale);
    const auto& b = snapshot_->layout.bounds;
    centerOn(QPointF(b.x + b.width / 2, b.y + b.height / 2));
    minimap_->viewport()->update();
    updateMinimapVisibility();
    emit zoomChanged(scale);
}

void GraphView::resizeEvent(QResizeEvent* e) {
    QGraphicsView::resizeEvent(e);
    if (snapshot_) minimap_->resize(Minimap::sizeFor(scene_->sceneRect().size(), viewport()->size()));
    positionOverlays();
    updateMinimapVisibility();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    minimap_->viewport()->update();
    updateMinimapVisibility();
}

void GraphView::positionOverlays() { placeOverlays(); }

QSize GraphView::legendSize() const {
    QFont f("DejaVu Sans");
    f.setPixelSize(12);
    const QFontMetrics fm(f);
    int w = 0, rows = 0;
    for (auto c : presentCategories_) {
        w = std::max(w, fm.horizontalAdvance(layout::styleOf(c).name));
        ++rows;
    }
    if (rows == 0) return {};
    return {w + 44, rows * (fm.height() + 6) + 14};
}

void GraphView::drawForeground(QPainter* p, const QRectF&) {
    drawCaption(p);
    if (legendRect_.isEmpty()) return;
    // The legend lists only the categories present, in a corner of the viewport away from the
    // selection (placeOverlays).
    p->save();
    p->resetTransform();
    QFont f("DejaVu Sans");
    f.setPixelSize(12);
    p->setFont(f);
    QFontMetrics fm(f);
    const int row = fm.height() + 6, w = legendRect_.width() - 44;
    const QRect frame = legendRect_;
    p->setRenderHint(QPainter::Antialiasing);
    p->setPen(QColor("#c8ccd2"));
    p->setBrush(QColor(255, 255, 255, 235));
    p->drawRoundedRect(frame, 6, 6);
    int y = frame.top() + 8;
    for (auto c : presentCategories_) {
        const auto& s = layout::styleOf(c);
        p->setPen(QPen(QColor(s.border), 1.4));
        p->setBrush(QColor(s.fill));
        p->drawRoundedRect(QRect(frame.left() + 10, y + 2, 18, row - 8), 3, 3);
        p->setPen(QColor("#1d2330"));
        p->drawText(QRect(frame.left() + 36, y, w + 4, row - 4), Qt::AlignVCenter | Qt::AlignLeft, s.name);
        y += row;
    }
    p->restore();
}

}  // namespace passlens::ui
