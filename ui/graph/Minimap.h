#pragma once
// Overview of the whole drawing with the visible area outlined; click or drag to move there.
#include <QGraphicsView>

namespace passlens::ui {

class Minimap : public QGraphicsView {
    Q_OBJECT
public:
    Minimap(QGraphicsView* main, QWidget* parent);
    void refit();
    /// A map of the drawing's own proportions with about the area of a 200×150 box: a tall
    /// transformer gets a narrow, tall map (a strip in a wide map showed nothing), bounded by
    /// half the view's height so it never covers most of it.
    static QSize sizeFor(QSizeF drawing, QSize view);

protected:
    void drawForeground(QPainter* p, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* e) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void resizeEvent(QResizeEvent* e) override;

private:
    QGraphicsView* main_;
};

}  // namespace passlens::ui
