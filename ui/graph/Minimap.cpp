#include "graph/Minimap.h"

#include <algorithm>
#include <cmath>

#include <QMouseEvent>

namespace passlens::ui {

Minimap::Minimap(QGraphicsView* main, QWidget* parent) : QGraphicsView(main->scene(), parent), main_(main) {
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFrameShape(QFrame::Box);
    setStyleSheet("background: rgba(255,255,255,230); border: 1px solid #c8ccd2;");
    setRenderHint(QPainter::Antialiasing, false);
    setCursor(Qt::PointingHandCursor);
}

QSize Minimap::sizeFor(QSizeF drawing, QSize view) {
    constexpr double kArea = 200.0 * 150.0;
    const double aspect = drawing.width() > 0 && drawing.height() > 0 ? drawing.height() / drawing.width() : 0.75;
    const double maxHeight = std::max(60.0, std::min(340.0, view.height() * 0.5));
    const double maxWidth = std::max(70.0, std::min(260.0, view.width() * 0.35));
    const double width = std::clamp(std::sqrt(kArea / aspect), 70.0, maxWidth);
    const double height = std::clamp(width * aspect, 60.0, maxHeight);
    return {static_cast<int>(std::lround(width)), static_cast<int>(std::lround(height))};
}

void Minimap::refit() {
    if (scene()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
}

void Minimap::resizeEvent(QResizeEvent* e) {
    QGraphicsView::resizeEvent(e);
    refit();
}

void Minimap::drawForeground(QPainter* p, const QRectF&) {
    QRectF visible = main_->mapToScene(main_->viewport()->rect()).boundingRect();
    p->setPen(QPen(QColor("#1f6feb"), 0));
    p->setBrush(QColor(31, 111, 235, 40));
    p->drawRect(visible);
}

void Minimap::mousePressEvent(QMouseEvent* e) {
    main_->centerOn(mapToScene(e->position().toPoint()));
}

void Minimap::mouseMoveEvent(QMouseEvent* e) {
    if (e->buttons() & Qt::LeftButton) main_->centerOn(mapToScene(e->position().toPoint()));
}

}  // namespace passlens::ui
