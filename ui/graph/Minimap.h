#pragma once
// Overview of the whole drawing with the visible area outlined; click or drag to move there.
#include <QGraphicsView>

namespace passlens::ui {

class Minimap : public QGraphicsView {
    Q_OBJECT
public:
    Minimap(QGraphicsView* main, QWidget* parent);
    void refit();

protected:
    void drawForeground(QPainter* p, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    QGraphicsView* main_;
};

}  // namespace passlens::ui
