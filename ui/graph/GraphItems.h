#pragma once
// Scene items. They only paint what they were given; graph logic stays in core and the view.
#include <QGraphicsItem>
#include <QPainterPath>
#include <QStringList>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    NodeItem(const layout::DisplayNode& node, const QRectF& rect);
    int type() const override { return Type; }
    QRectF boundingRect() const override;
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;

    uint32_t key() const { return key_; }
    void setStyleOverride(const NodeStyle* style);
    void setSearchHit(bool hit);
    bool isSearchHit() const { return searchHit_; }
    /// Drawn desaturated unless it carries a style override (the unchanged boxes of a diff).
    void setMuted(bool muted);
    bool isMuted() const { return muted_ && !override_; }
    /// An op of another domain than ai.onnx (ONNX Runtime's com.microsoft contrib ops, passlens.*):
    /// drawn with a double border and the domain's short tag ("ms") in the top-left corner.
    void setDomainTag(const QString& tag);
    QString domainTag() const { return domainTag_; }

private:
    uint32_t key_;
    QRectF rect_;
    QString title_;
    QStringList lines_;
    int subtitleLines_ = 0;
    QColor fill_, border_;
    layout::DisplayNode::Kind kind_;
    bool hasSubgraphs_;
    std::optional<NodeStyle> override_;
    bool searchHit_ = false;
    bool muted_ = false;
    QString domainTag_;
};

/// Paints the pieces every box shape shares: the diff ring, the hatching, the badge pill.
void paintDiffRing(QPainter* p, const QRectF& box, qreal radius, const QColor& color, bool dashed);
void paintHatching(QPainter* p, const QRectF& box, qreal radius, const QColor& color);
void paintBadge(QPainter* p, const QRectF& box, const QString& text, const QColor& color);
/// A color washed towards light grey: an unchanged box while a diff is shown.
QColor mutedColor(const QColor& c);

/// A node the shown pass removed, drawn where it stood (a red dashed ghost). Not a node item: it
/// is not selectable and GraphView does not count it among the snapshot's boxes.
class GhostItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };
    GhostItem(uint32_t node, const QRectF& rect, const QString& title, const QString& subtitle, const NodeStyle& style);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return rect_.adjusted(-7, -14, 14, 7); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
    uint32_t node() const { return node_; }

private:
    uint32_t node_;
    QRectF rect_;
    QString title_, subtitle_;
    NodeStyle style_;
};

class EdgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 2 };
    /// `labelRect`: where the label reads without covering a box or another label
    /// (layout::placeEdgeLabels); without one the label shows only while the edge is highlighted.
    EdgeItem(const layout::EdgePath& path, const QString& label, std::optional<QRectF> labelRect = std::nullopt);
    int type() const override { return Type; }
    /// The label's rectangle as drawn when nothing is highlighted (nullopt: hidden until then).
    std::optional<QRectF> shownLabelRect() const { return label_.isEmpty() ? std::nullopt : labelRect_; }
    QRectF boundingRect() const override { return bounds_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
    void setHighlighted(bool on);
    void setStyleOverride(const EdgeStyle* style);
    bool hasStyleOverride() const { return override_.has_value(); }
    uint32_t from() const { return from_; }
    uint32_t to() const { return to_; }

private:
    uint32_t from_ = 0, to_ = 0;
    std::optional<EdgeStyle> override_;
    QPainterPath path_;
    QPolygonF arrow_;
    QString label_;
    std::optional<QRectF> labelRect_;
    QRectF onDemandLabelRect_;  ///< beside the middle of the path, for a label with no free place
    QRectF bounds_;
    bool highlighted_ = false;
};

/// Translucent frame around a cluster of boxes; drawn under nodes and edges.
class ClusterItem : public QGraphicsItem {
public:
    enum { Type = UserType + 6 };  // distinct from GhostItem: scene queries tell them apart
    /// `fillAlpha`: open groups nest five deep and more, so their frames are filled lighter than
    /// fusion clusters' (stacked fills would grey out the boxes inside).
    ClusterItem(const QRectF& frame, const QString& label, const QColor& color, int fillAlpha = 38);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return frame_.adjusted(-2, -2, 2, 2); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;

private:
    QRectF frame_;
    QColor color_;
    int fillAlpha_;
};

/// A cluster's label on a light plate, above the edges (their labels cross cluster frames).
class ClusterLabelItem : public QGraphicsItem {
public:
    enum { Type = UserType + 5 };
    ClusterLabelItem(const QPointF& pos, qreal maxWidth, const QString& label, const QColor& color);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return rect_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;

private:
    QRectF rect_;
    QString text_;
    QColor color_;
};

/// A small tag ("anchor") drawn over a box's top-left corner, above the boxes.
class TagItem : public QGraphicsItem {
public:
    enum { Type = UserType + 4 };
    TagItem(const QRectF& box, const QString& text, const QColor& color);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return rect_.adjusted(-1, -1, 1, 1); }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;

private:
    QRectF rect_;
    QString text_;
    QColor color_;
};

}  // namespace passlens::ui
