#include "graph/GraphItems.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <QtMath>

#include "graph/LayoutJob.h"

namespace passlens::ui {

NodeItem::NodeItem(const layout::DisplayNode& n, const QRectF& rect)
    // A collapsed group gets the stacked-card look too: it has content to open.
    : key_(n.key), rect_(rect), kind_(n.kind), hasSubgraphs_(n.hasSubgraphs || n.kind == layout::DisplayNode::Kind::Group) {
    title_ = QString::fromStdString(n.title);
    if (!n.subtitle.empty()) { lines_ << QString::fromStdString(n.subtitle); subtitleLines_ = 1; }
    for (const auto& l : n.foldedLines) lines_ << QString::fromStdString(l);
    fill_ = QColor(layout::styleOf(n.category).fill);
    border_ = QColor(layout::styleOf(n.category).border);
    setFlag(ItemIsSelectable);
    setCacheMode(DeviceCoordinateCache);
    setZValue(1);
    setToolTip(title_ + (lines_.isEmpty() ? QString() : "\n" + lines_.join('\n')));
}

QRectF NodeItem::boundingRect() const {
    // Room for the diff ring and the search halo around the box, and a badge on its top-right
    // corner, half outside.
    return rect_.adjusted(-9, -14, 14, 9);
}

void NodeItem::setStyleOverride(const NodeStyle* style) {
    if (style) override_ = *style; else override_.reset();
    update();
}

void NodeItem::setSearchHit(bool hit) {
    if (searchHit_ == hit) return;
    searchHit_ = hit;
    update();
}

void NodeItem::setMuted(bool muted) {
    if (muted_ == muted) return;
    muted_ = muted;
    update();
}

void NodeItem::setDomainTag(const QString& tag) {
    domainTag_ = tag;
    update();
}

QColor mutedColor(const QColor& c) {
    // Halfway to grey, then lightened: still tells categories apart up close, but a diff's marked
    // boxes stand out.
    const int grey = qGray(c.rgb());
    QColor g((c.red() + grey) / 2, (c.green() + grey) / 2, (c.blue() + grey) / 2);
    return QColor((g.red() + 2 * 250) / 3, (g.green() + 2 * 250) / 3, (g.blue() + 2 * 250) / 3);
}

void paintDiffRing(QPainter* p, const QRectF& box, qreal radius, const QColor& color, bool dashed) {
    p->save();
    QPen pen(color, 3.2);
    if (dashed) pen.setStyle(Qt::DashLine);
    p->setPen(pen);
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(box.adjusted(-4, -4, 4, 4), radius + 3, radius + 3);
    p->restore();
}

void paintHatching(QPainter* p, const QRectF& box, qreal radius, const QColor& color) {
    p->save();
    QPainterPath clip;
    clip.addRoundedRect(box, radius, radius);
    p->setClipPath(clip, Qt::IntersectClip);
    QColor c = color;
    c.setAlpha(70);
    p->setPen(QPen(c, 2.0));
    for (qreal x = box.left() - box.height(); x < box.right(); x += 9)
        p->drawLine(QPointF(x, box.bottom()), QPointF(x + box.height(), box.top()));
    p->restore();
}

void paintBadge(QPainter* p, const QRectF& box, const QString& text, const QColor& color) {
    if (text.isEmpty()) return;
    QFont f = nodeTextFont();
    f.setBold(true);
    f.setPixelSize(9);
    QFontMetricsF fm(f);
    const qreal w = fm.horizontalAdvance(text) + 10, h = fm.height() + 2;
    const QRectF pill(box.right() - w + 8, box.top() - h / 2 - 2, w, h);
    p->save();
    p->setOpacity(1.0);
    p->setPen(Qt::NoPen);
    p->setBrush(color);
    p->drawRoundedRect(pill, h / 2, h / 2);
    p->setFont(f);
    p->setPen(Qt::white);
    p->drawText(pill, Qt::AlignCenter, text);
    p->restore();
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
    const qreal lod = opt->levelOfDetailFromTransform(p->worldTransform());
    QColor fill = fill_, border = border_, text("#1d2330"), subtext("#4b5563");
    qreal opacity = 1.0;
    bool dashed = false;
    if (override_) {
        if (override_->fill.isValid()) fill = override_->fill;
        if (override_->border.isValid()) border = override_->border;
        opacity = override_->opacity;
        dashed = override_->dashed;
    } else if (muted_) {
        fill = mutedColor(fill);
        border = mutedColor(border).darker(115);
        text = QColor("#6b7280");
        subtext = QColor("#9ca3af");
    }
    const qreal radius = (kind_ == layout::DisplayNode::Kind::Input || kind_ == layout::DisplayNode::Kind::Output)
                             ? rect_.height() / 2 : 6.0;
    if (searchHit_ && !isSelected()) {  // find's own mark: a soft cyan halo, unlike any ring or fill
        p->setPen(Qt::NoPen);
        p->setBrush(QColor(0, 180, 216, 110));
        p->drawRoundedRect(rect_.adjusted(-8, -8, 8, 8), radius + 6, radius + 6);
    }
    p->setOpacity(opacity);
    QPen pen(isSelected() ? QColor("#1f6feb") : border, isSelected() ? 3.0 : 1.4);
    if (dashed) pen.setStyle(Qt::DashLine);
    p->setPen(pen);
    p->setBrush(fill);
    if (lod < 0.25) {  // far out: colored blocks only
        p->drawRect(rect_);
        if (override_ && override_->outline.isValid()) paintDiffRing(p, rect_, 0, override_->outline, false);
        return;
    }
    p->drawRoundedRect(rect_, radius, radius);
    if (override_ && override_->hatched) paintHatching(p, rect_, radius, override_->outline.isValid() ? override_->outline : border);
    if (override_ && override_->outline.isValid() && !isSelected()) paintDiffRing(p, rect_, radius, override_->outline, false);
    if (hasSubgraphs_) {  // a stacked-card hint: this node has a body to open
        p->setPen(QPen(border, 1.4));
        p->setBrush(Qt::NoBrush);
        p->drawRoundedRect(rect_.adjusted(3, 3, 3, 3).intersected(rect_.adjusted(0, 0, 3, 3)), radius, radius);
    }
    if (!domainTag_.isEmpty()) {  // a contrib op: an inner border and its domain's tag
        p->setPen(QPen(border, 1.0));
        p->setBrush(Qt::NoBrush);
        p->drawRoundedRect(rect_.adjusted(3, 3, -3, -3), radius - 2, radius - 2);
    }
    if (lod < 0.45) return;  // text unreadable at this zoom: skip it (keeps panning smooth)
    if (!domainTag_.isEmpty()) {
        QFont f = nodeTextFont();
        f.setBold(true);
        f.setPixelSize(8);
        // Bottom-left, clear of the title (which names the domain already).
        const QRectF tag(rect_.left() + 5, rect_.bottom() - 15, QFontMetricsF(f).horizontalAdvance(domainTag_) + 6, 11);
        p->setPen(Qt::NoPen);
        p->setBrush(border);
        p->drawRoundedRect(tag, 3, 3);
        p->setFont(f);
        p->setPen(Qt::white);
        p->drawText(tag, Qt::AlignCenter, domainTag_);
    }

    QFont tf = nodeTitleFont(), bf = nodeTextFont();
    QFontMetricsF tm(tf), bm(bf);
    qreal y = rect_.top() + 6;
    p->setFont(tf);
    p->setPen(text);
    p->drawText(QRectF(rect_.left() + 4, y, rect_.width() - 8, tm.height()), Qt::AlignCenter, title_);
    y += tm.height();
    p->setFont(bf);
    for (int i = 0; i < lines_.size(); ++i) {
        p->setPen(i < subtitleLines_ ? subtext : (muted_ && !override_ ? subtext : QColor("#374151")));
        p->drawText(QRectF(rect_.left() + 4, y, rect_.width() - 8, bm.height()), Qt::AlignCenter,
                    bm.elidedText(lines_[i], Qt::ElideMiddle, rect_.width() - 8));
        y += bm.height();
    }
    if (override_) paintBadge(p, rect_, override_->badge, override_->outline.isValid() ? override_->outline : border);
}

GhostItem::GhostItem(uint32_t node, const QRectF& rect, const QString& title, const QString& subtitle, const NodeStyle& style)
    : node_(node), rect_(rect), title_(title), subtitle_(subtitle), style_(style) {
    setZValue(0.5);  // over edges, under real boxes
    setToolTip(QObject::tr("%1 (%2): removed by this pass").arg(title, subtitle));
}

void GhostItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
    const qreal lod = opt->levelOfDetailFromTransform(p->worldTransform());
    const QColor ring = style_.outline.isValid() ? style_.outline : style_.border;
    p->setOpacity(style_.opacity);
    p->setPen(QPen(style_.border, 1.4, Qt::DashLine));
    p->setBrush(style_.fill);
    p->drawRoundedRect(rect_, 6, 6);
    if (style_.hatched) paintHatching(p, rect_, 6, style_.border.isValid() ? style_.border : ring);  // grey: no category tint
    p->setOpacity(1.0);
    paintDiffRing(p, rect_, 6, ring, true);
    if (lod < 0.45) return;
    QFont tf = nodeTitleFont(), bf = nodeTextFont();
    QFontMetricsF tm(tf), bm(bf);
    p->setFont(tf);
    p->setPen(QColor("#1d2330"));
    p->drawText(QRectF(rect_.left() + 4, rect_.top() + 6, rect_.width() - 8, tm.height()), Qt::AlignCenter, title_);
    p->setFont(bf);
    p->setPen(QColor("#4b5563"));
    p->drawText(QRectF(rect_.left() + 4, rect_.top() + 6 + tm.height(), rect_.width() - 8, bm.height()), Qt::AlignCenter,
                bm.elidedText(subtitle_, Qt::ElideMiddle, rect_.width() - 8));
    paintBadge(p, rect_, style_.badge, ring);
}

EdgeItem::EdgeItem(const layout::EdgePath& e, const QString& label, std::optional<QRectF> labelRect)
    : from_(e.from), to_(e.to), label_(label), labelRect_(labelRect) {
    if (!e.points.empty()) {
        path_.moveTo(e.points[0].x, e.points[0].y);
        for (size_t i = 1; i + 2 < e.points.size(); i += 3)
            path_.cubicTo(e.points[i].x, e.points[i].y, e.points[i + 1].x, e.points[i + 1].y,
                          e.points[i + 2].x, e.points[i + 2].y);
    }
    if (e.arrowTip && !e.points.empty()) {
        QPointF tip(e.arrowTip->x, e.arrowTip->y), from(e.points.back().x, e.points.back().y);
        QLineF l(from, tip);
        qreal ang = qDegreesToRadians(l.angle());
        QPointF d(std::cos(ang), -std::sin(ang)), nrm(-d.y(), d.x());
        const qreal len = std::max<qreal>(l.length(), 7.0), half = 3.5;
        QPointF base = tip - d * len;
        arrow_ << tip << base + nrm * half << base - nrm * half;
    }
    bounds_ = path_.boundingRect().united(arrow_.boundingRect()).adjusted(-3, -3, 3, 3);
    if (!label_.isEmpty()) {
        QFontMetricsF fm(nodeTextFont());
        const QSizeF size(fm.horizontalAdvance(label_) + 2, fm.height());
        onDemandLabelRect_ = QRectF(QPointF(e.labelAnchor.x + 4, e.labelAnchor.y - size.height() / 2), size);
        bounds_ = bounds_.united(onDemandLabelRect_.adjusted(-2, -1, 2, 1));
        if (labelRect_) bounds_ = bounds_.united(*labelRect_);
    }
    setZValue(0);
    setCacheMode(DeviceCoordinateCache);
}

void EdgeItem::setHighlighted(bool on) {
    highlighted_ = on;
    update();
}

void EdgeItem::setStyleOverride(const EdgeStyle* style) {
    if (style) override_ = *style; else override_.reset();
    update();
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
    const qreal lod = opt->levelOfDetailFromTransform(p->worldTransform());
    QColor c = highlighted_ ? QColor("#1f6feb") : QColor("#8b929c");
    QPen pen(c, highlighted_ ? 2.2 : 1.2);
    if (override_) {  // an outside decoration wins over the selection highlight
        if (override_->color.isValid()) c = override_->color;
        pen = QPen(c, override_->width);
        if (override_->dashed) pen.setStyle(Qt::DashLine);
    }
    p->setPen(pen);
    p->setBrush(Qt::NoBrush);
    p->drawPath(path_);
    if (!arrow_.isEmpty()) {
        p->setPen(Qt::NoPen);
        p->setBrush(c);
        p->drawPolygon(arrow_);
    }
    if (lod >= 0.6 && !label_.isEmpty() && (labelRect_ || highlighted_)) {
        QRectF r = labelRect_ ? *labelRect_ : onDemandLabelRect_;
        if (!labelRect_) {  // shown on demand over whatever is there: give it a ground
            p->setPen(Qt::NoPen);
            p->setBrush(QColor(255, 255, 255, 230));
            p->drawRect(r.adjusted(-2, -1, 2, 1));
        }
        p->setFont(nodeTextFont());
        p->setPen(highlighted_ ? QColor("#1f4fa8") : QColor("#5b6270"));
        p->drawText(r, Qt::AlignLeft | Qt::AlignVCenter, label_);
    }
}

ClusterItem::ClusterItem(const QRectF& frame, const QString& label, const QColor& color, int fillAlpha)
    : frame_(frame), color_(color), fillAlpha_(fillAlpha) {
    setZValue(-1);
    setAcceptedMouseButtons(Qt::NoButton);
    setToolTip(label);
}

void ClusterItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    QColor fill = color_;
    fill.setAlpha(fillAlpha_);
    QColor border = color_;
    border.setAlpha(170);
    p->setPen(QPen(border, 1.4, Qt::DashLine));
    p->setBrush(fill);
    p->drawRoundedRect(frame_, 12, 12);
}

ClusterLabelItem::ClusterLabelItem(const QPointF& pos, qreal maxWidth, const QString& label, const QColor& color)
    : color_(color) {
    QFont f = nodeTextFont();
    f.setBold(true);
    QFontMetricsF fm(f);
    text_ = fm.elidedText(label, Qt::ElideRight, maxWidth);
    rect_ = QRectF(pos - QPointF(3, 1), QSizeF(fm.horizontalAdvance(text_) + 6, fm.height() + 2));
    setZValue(0.5);  // above edges and their labels, below the boxes
    setAcceptedMouseButtons(Qt::NoButton);
    setToolTip(label);
}

void ClusterLabelItem::paint(QPainter* p, const QStyleOptionGraphicsItem* opt, QWidget*) {
    if (opt->levelOfDetailFromTransform(p->worldTransform()) < 0.35) return;
    p->setPen(Qt::NoPen);
    p->setBrush(QColor(255, 255, 255, 225));
    p->drawRoundedRect(rect_, 3, 3);
    QFont f = nodeTextFont();
    f.setBold(true);
    p->setFont(f);
    p->setPen(color_.darker(150));
    p->drawText(rect_, Qt::AlignCenter, text_);
}

TagItem::TagItem(const QRectF& box, const QString& text, const QColor& color) : text_(text), color_(color) {
    QFont f = nodeTextFont();
    f.setBold(true);
    QFontMetricsF fm(f);
    const QSizeF size(fm.horizontalAdvance(text) + 10, fm.height() + 2);
    rect_ = QRectF(QPointF(box.left() - 6, box.top() - size.height() / 2 - 2), size);
    setZValue(3);
    setAcceptedMouseButtons(Qt::NoButton);
}

void TagItem::paint(QPainter* p, const QStyleOptionGraphicsItem*, QWidget*) {
    p->setPen(Qt::NoPen);
    p->setBrush(color_);
    p->drawRoundedRect(rect_, rect_.height() / 2, rect_.height() / 2);
    QFont f = nodeTextFont();
    f.setBold(true);
    p->setFont(f);
    p->setPen(Qt::white);
    p->drawText(rect_, Qt::AlignCenter, text_);
}

}  // namespace passlens::ui
