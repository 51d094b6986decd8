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
};

/// A node the shown pass removed, drawn where it stood (a red dashed ghost). Not a node item: it
/// is not selectable and GraphView does not count it among the snapshot's boxes.
class GhostItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };
    GhostItem(uint32_t node, const QRectF& rect, const QString& title, const QString& subtitle, const NodeStyle& style);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return rect_.adjusted(-4, -12, 12, 4); }
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
    EdgeItem(const layout::EdgePath& path, const QString& label);
    int type() const override { return Type; }
    QRectF boundingRect() const override { return bounds_; }
    void paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget* w) override;
    void setHighlighted(bool on);

private:
    QPainterPath path_;
    QPolygonF arrow_;
    QString label_;
    QPointF labelPos_;
    QRectF bounds_;
    bool highlighted_ = false;
};

}  // namespace passlens::ui
