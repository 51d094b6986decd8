#pragma once
// Where the first view of a drawing looks. Plain geometry (no widgets), so tests can check it
// without a window: the whole drawing when it stays readable fitted; otherwise a readable zoom
// with the graph inputs near the top, the way one reads a model, never the drawing's middle
// (a wide export's bounding box can be empty there).
#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include "layout/DisplayGraph.h"
#include "layout/Layout.h"

namespace passlens::ui {

struct FirstView {
    bool fitWhole = false;  ///< fit the drawing (then `scale` and `center` are not used)
    double scale = 1.0;
    QPointF center;         ///< scene point to center on
};

/// The smallest zoom at which box titles stay readable.
constexpr double kReadableScale = 0.55;

/// `topRoom`: scene units kept free above the drawing (for the view's caption).
FirstView chooseFirstView(const layout::DisplayGraph& display, const layout::LayoutResult& layout, QSizeF viewport,
                          double topRoom = 0);

/// The scene rect the inputs' view is built around: the topmost input box, widened to the inputs
/// beside it that fit `visible` too. Falls back to the topmost box when the drawing has no input box.
QRectF inputAnchor(const layout::DisplayGraph& display, const layout::LayoutResult& layout, QSizeF visible);

}  // namespace passlens::ui
