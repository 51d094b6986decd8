#include "memory/MemoryChartWidget.h"

#include <QContextMenuEvent>
#include <QFileDialog>
#include <QImage>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QSvgGenerator>
#include <QToolTip>
#include <cmath>
#include <map>

#include "memory/BytesText.h"
#include "plot/Scale.h"

namespace passlens::ui {

namespace {
constexpr double kLeft = 78, kRight = 16, kTop = 50, kBottom = 44;

QRectF toQ(const plot::Rect& r) { return {r.x, r.y, r.width, r.height}; }
}  // namespace

QColor bandColor(int band) {
    double hue = std::fmod(0.08 + band * 0.618033988749895, 1.0);
    double value = (band % 3 == 0) ? 0.92 : (band % 3 == 1 ? 0.78 : 0.86);
    double sat = (band % 2 == 0) ? 0.55 : 0.70;
    return QColor::fromHsvF(static_cast<float>(hue), static_cast<float>(sat), static_cast<float>(value));
}

MemoryChartWidget::MemoryChartWidget(Kind kind, QWidget* parent) : QWidget(parent), kind_(kind) {
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setObjectName(kind == Kind::Arena ? "arenaChart" : kind == Kind::Lifetime ? "lifetimeChart" : "liveBytesChart");
}

void MemoryChartWidget::setPlan(std::shared_ptr<const memory::MemoryPlan> plan, const QString& title) {
    plan_ = std::move(plan);
    title_ = title;
    hovered_ = -1;
    selected_ = -1;
    setBandSource(bandSource_ ? bandSource_ : plan_);
}

void MemoryChartWidget::setBandSource(std::shared_ptr<const memory::MemoryPlan> colorPlan) {
    bandSource_ = std::move(colorPlan);
    bandOfTensor_.clear();
    if (bandSource_) plot::assignBands(bandSource_->buffers, &bandOfTensor_);
    update();
}

void MemoryChartWidget::clear() {
    plan_.reset();
    bandSource_.reset();
    bandOfTensor_.clear();
    hovered_ = -1;
    selected_ = -1;
    update();
}

QString MemoryChartWidget::chartSubject() const {
    return kind_ == Kind::Arena      ? "Arena: buffers over steps (shared memory = same band)"
           : kind_ == Kind::Lifetime ? "Tensor lifetimes over the schedule"
                                     : "Live bytes per step";
}

QString MemoryChartWidget::chartTitle() const { return title_.isEmpty() ? chartSubject() : title_ + " — " + chartSubject(); }

plot::PlotArea MemoryChartWidget::plotArea(const QRectF& b) const {
    return {b.left() + kLeft, b.top() + kTop, std::max(10.0, b.width() - kLeft - kRight),
            std::max(10.0, b.height() - kTop - kBottom)};
}

QColor MemoryChartWidget::bandColorForTensor(int tensor) const {
    if (tensor >= 0 && tensor < static_cast<int>(bandOfTensor_.size())) return bandColor(bandOfTensor_[tensor]);
    return QColor(150, 160, 175);
}

QString MemoryChartWidget::stepName(int step) const {
    if (!plan_ || step < 0 || step >= static_cast<int>(plan_->scheduleNames.size())) return QString::number(step);
    return QString("%1 (%2)").arg(step).arg(QString::fromStdString(plan_->scheduleNames[step]));
}

// ---- painting ------------------------------------------------------------------------------

void MemoryChartWidget::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paintChart(p, rect());
}

void MemoryChartWidget::paintChart(QPainter& p, const QRectF& bounds) const {
    p.save();
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(bounds, Qt::white);
    const QFont base = p.font();
    QFont titleFont = base;
    titleFont.setBold(true);
    titleFont.setPointSizeF(titleFont.pointSizeF() + 1);
    p.setFont(titleFont);
    p.setPen(QColor(30, 30, 30));
    // Narrow (three charts side by side in a docked pane): the chart's short name after whose
    // plan it is (two planners' charts must stay apart), rather than a title cut in the middle.
    const int room = static_cast<int>(bounds.width() - 16);
    const QString shortSubject = kind_ == Kind::Arena ? "arena" : kind_ == Kind::Lifetime ? "lifetimes" : "live bytes";
    QString title = chartTitle();
    if (p.fontMetrics().horizontalAdvance(title) > room)
        title = p.fontMetrics().elidedText(title_.isEmpty() ? chartSubject() : title_ + " — " + shortSubject, Qt::ElideMiddle, room);
    p.drawText(QRectF(bounds.left() + 8, bounds.top() + 4, bounds.width() - 16, 22), Qt::AlignLeft | Qt::AlignVCenter, title);
    p.setFont(base);
    if (!plan_) {
        p.setPen(QColor(120, 120, 120));
        p.drawText(bounds, Qt::AlignCenter, "No plan yet");
        p.restore();
        return;
    }
    paintLegend(p, bounds);
    plot::PlotArea a = plotArea(bounds);
    p.fillRect(QRectF(a.left, a.top, a.width, a.height), QColor(248, 249, 251));
    switch (kind_) {
    case Kind::Arena: paintArena(p, a); break;
    case Kind::Lifetime: paintLifetimes(p, a); break;
    case Kind::LiveBytes: paintLiveBytes(p, a); break;
    }
    p.setPen(QColor(90, 90, 90));
    p.setBrush(Qt::NoBrush);
    p.drawRect(QRectF(a.left, a.top, a.width, a.height));
    p.restore();
}

void MemoryChartWidget::paintXAxis(QPainter& p, const plot::PlotArea& a, const std::vector<plot::Tick>& ticks) const {
    QFontMetricsF fm(p.font());
    for (const auto& t : ticks) {
        p.setPen(QColor(225, 228, 233));
        p.drawLine(QPointF(t.pixel, a.top), QPointF(t.pixel, a.bottom()));
        p.setPen(QColor(60, 60, 60));
        p.drawLine(QPointF(t.pixel, a.bottom()), QPointF(t.pixel, a.bottom() + 4));
        QString label = QString::fromStdString(t.label);
        double w = fm.horizontalAdvance(label);
        p.drawText(QPointF(t.pixel - w / 2, a.bottom() + 5 + fm.ascent()), label);
    }
    QString title = "schedule step";
    int first = plot::firstActiveStep(*plan_);
    if (first > 0) title += QString("  (steps 0–%1 allocate no arena memory and are not shown)").arg(first - 1);
    p.drawText(QRectF(a.left, a.bottom() + 6 + fm.height(), a.width, fm.height()), Qt::AlignHCenter, title);
}

void MemoryChartWidget::paintYAxis(QPainter& p, const plot::PlotArea& a, const std::vector<plot::Tick>& ticks,
                                   const QString& title) const {
    QFontMetricsF fm(p.font());
    for (const auto& t : ticks) {
        p.setPen(QColor(225, 228, 233));
        p.drawLine(QPointF(a.left, t.pixel), QPointF(a.right(), t.pixel));
        p.setPen(QColor(60, 60, 60));
        p.drawLine(QPointF(a.left - 4, t.pixel), QPointF(a.left, t.pixel));
        QString label = QString::fromStdString(t.label);
        p.drawText(QRectF(a.left - kLeft + 4, t.pixel - fm.height() / 2, kLeft - 12, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, label);
    }
    p.save();
    p.translate(a.left - kLeft + 4 + fm.ascent() / 2, a.top + a.height / 2);
    p.rotate(-90);
    p.setPen(QColor(60, 60, 60));
    // Rotated title only when there are no numeric labels in the way.
    if (ticks.empty()) p.drawText(QRectF(-a.height / 2, -fm.height() / 2, a.height, fm.height()), Qt::AlignCenter, title);
    p.restore();
}

void MemoryChartWidget::paintArena(QPainter& p, const plot::PlotArea& a) const {
    plot::ArenaChartGeometry g = plot::layoutArenaChart(*plan_, a);
    paintYAxis(p, a, g.yTicks, "arena offset");
    paintXAxis(p, a, g.xTicks);
    // The planned arena: everything above the dashed line is memory the plan never uses.
    p.setPen(QPen(QColor(200, 40, 40), 1.5, Qt::DashLine));
    p.drawLine(QPointF(a.left, g.arenaOutline.y), QPointF(a.right(), g.arenaOutline.y));
    bool thin = g.rects.size() > 200;
    // Thousands of sub-pixel buffers: one fill per pixel run of a band (hit tests use g.rects).
    for (const auto& r : plot::mergeSubPixelRects(g.rects)) {
        QRectF q = toQ(r.rect);
        if (q.height() < 1) q.setHeight(1);
        if (q.width() < 1) q.setWidth(1);
        p.fillRect(q, bandColor(r.band));
        if (!thin && q.height() > 3 && q.width() > 3) {
            p.setPen(QPen(bandColor(r.band).darker(160), 0));
            p.setBrush(Qt::NoBrush);
            p.drawRect(q);
        }
    }
    if (hovered_ >= 0 && hovered_ < static_cast<int>(g.rects.size())) {
        p.setPen(QPen(Qt::black, 2));
        p.setBrush(Qt::NoBrush);
        p.drawRect(toQ(g.rects[hovered_].rect));
    }
    if (selected_ >= 0 && selected_ < static_cast<int>(g.rects.size())) {
        p.setPen(QPen(QColor("#1f6feb"), 3));
        p.setBrush(Qt::NoBrush);
        p.drawRect(toQ(g.rects[selected_].rect).adjusted(-1, -1, 1, 1));
    }
    p.setPen(QColor(200, 40, 40));
    QFontMetricsF fm(p.font());
    QString arena = "arena " + bytesText(static_cast<double>(plan_->arenaBytes));
    p.drawText(QPointF(a.right() - fm.horizontalAdvance(arena) - 4, g.arenaOutline.y - 3), arena);
}

void MemoryChartWidget::paintLifetimes(QPainter& p, const plot::PlotArea& a) const {
    plot::LifetimeChartGeometry g = plot::layoutLifetimeChart(*plan_, a);
    // Row count ticks on the y axis.
    plot::LinearScale rows = g.y;
    std::vector<plot::Tick> yTicks;
    for (double v : plot::niceTicks(0, rows.domainEnd, 6)) {
        if (v != std::floor(v)) continue;
        yTicks.push_back({v, rows.toPixel(v), QString::number(v, 'f', 0).toStdString()});
    }
    paintYAxis(p, a, yTicks, "tensor");
    paintXAxis(p, a, g.xTicks);
    // Thousands of sub-pixel rows: one fill per pixel row and run (hit tests use g.bars).
    for (const auto& b : plot::mergeSubPixelBars(g.bars)) {
        QRectF q = toQ(b.rect);
        if (q.height() > 4) q.adjust(0, 1, 0, -1);
        if (q.height() < 1) q.setHeight(1);
        p.fillRect(q, bandColorForTensor(b.tensor));
    }
    if (hovered_ >= 0)
        for (const auto& b : g.bars)
            if (b.tensor == hovered_) {
                p.setPen(QPen(Qt::black, 2));
                p.setBrush(Qt::NoBrush);
                p.drawRect(toQ(b.rect).adjusted(0, -1, 0, 1));
            }
    if (selected_ >= 0)
        for (const auto& b : g.bars)
            if (b.tensor == selected_) {
                p.setPen(QPen(QColor("#1f6feb"), 3));
                p.setBrush(Qt::NoBrush);
                p.drawRect(toQ(b.rect).adjusted(-1, -2, 1, 2));
            }
}

void MemoryChartWidget::paintLiveBytes(QPainter& p, const plot::PlotArea& a) const {
    plot::LiveBytesSeries s = plot::layoutLiveBytes(*plan_, a);
    paintYAxis(p, a, s.yTicks, "live bytes");
    paintXAxis(p, a, s.xTicks);
    const size_t points = s.curve.size();
    s.curve = plot::decimateStepCurve(s.curve);  // more steps than pixel columns: a few points each
    // A decimated curve is vertical strokes a pixel apart: antialiasing them costs a lot and shows
    // nothing, so it is only used where steps are wider than a pixel.
    const bool smooth = s.curve.size() == points;
    if (!s.curve.empty() && smooth) {
        QPainterPath area;
        area.moveTo(s.curve.front().x, a.bottom());
        for (const auto& pt : s.curve) area.lineTo(pt.x, pt.y);
        area.lineTo(s.curve.back().x, a.bottom());
        area.closeSubpath();
        p.fillPath(area, QColor(70, 120, 200, 60));
        QPainterPath line;
        line.moveTo(s.curve.front().x, s.curve.front().y);
        for (const auto& pt : s.curve) line.lineTo(pt.x, pt.y);
        p.setRenderHint(QPainter::Antialiasing, true);
        p.strokePath(line, QPen(QColor(40, 90, 180), 1.5));
        p.setRenderHint(QPainter::Antialiasing, false);
    } else if (!s.curve.empty()) {
        // Decimated: per pixel column, the area up to the column's peak (a polygon of thousands of
        // vertical spikes fills slowly) and the line through the peaks (the curve's upper envelope).
        std::map<int, double> peakY;
        for (const auto& pt : s.curve) {
            auto [it, fresh] = peakY.try_emplace(static_cast<int>(std::floor(pt.x)), pt.y);
            if (!fresh) it->second = std::min(it->second, pt.y);
        }
        QPolygonF line;
        for (const auto& [x, y] : peakY) {
            p.fillRect(QRectF(x, y, 1, a.bottom() - y), QColor(70, 120, 200, 60));
            line << QPointF(x, y) << QPointF(x + 1, y);
        }
        p.setPen(QPen(QColor(40, 90, 180), 1));
        p.drawPolyline(line);
    }
    // Arena first, lower bound on top with a shorter dash: when the plan is optimal they coincide
    // and both stay visible as one red-green line.
    p.setPen(QPen(QColor(200, 40, 40), 2, Qt::DashLine));
    p.drawLine(QPointF(a.left, s.arenaY), QPointF(a.right(), s.arenaY));
    p.setPen(QPen(QColor(20, 140, 60), 2, Qt::DotLine));
    p.drawLine(QPointF(a.left, s.lowerBoundY), QPointF(a.right(), s.lowerBoundY));
    if (hovered_ >= 0) {
        double x0 = s.x.toPixel(hovered_), x1 = s.x.toPixel(hovered_ + 1);
        p.fillRect(QRectF(x0, a.top, std::max(1.0, x1 - x0), a.height), QColor(0, 0, 0, 40));
    }
}

void MemoryChartWidget::paintLegend(QPainter& p, const QRectF& bounds) const {
    QFontMetricsF fm(p.font());
    double x = bounds.left() + kLeft, y = bounds.top() + 28;
    auto swatch = [&](const QColor& c, bool dashed, const QString& text) {
        if (dashed) {
            p.setPen(QPen(c, 2, Qt::DashLine));
            p.drawLine(QPointF(x, y + 7), QPointF(x + 22, y + 7));
        } else {
            p.fillRect(QRectF(x, y + 2, 22, 10), c);
        }
        p.setPen(QColor(50, 50, 50));
        p.drawText(QPointF(x + 27, y + 6 + fm.ascent() / 2), text);
        x += 27 + fm.horizontalAdvance(text) + 18;
    };
    const auto& pl = *plan_;
    if (kind_ == Kind::Arena) {
        size_t bands = plot::assignBands(pl.buffers, nullptr).size();
        for (int i = 0; i < 3; ++i) p.fillRect(QRectF(x + i * 8, y + 2, 8, 10), bandColor(i));
        x += 2;
        swatch(Qt::transparent, false,
               QString("%1 buffers in %2 blocks (color = block start offset)").arg(pl.buffers.size()).arg(bands));
        swatch(QColor(200, 40, 40), true, "arena " + bytesText(static_cast<double>(pl.arenaBytes)));
    } else if (kind_ == Kind::Lifetime) {
        for (int i = 0; i < 3; ++i) p.fillRect(QRectF(x + i * 8, y + 2, 8, 10), bandColor(i));
        x += 2;
        QString src = bandSource_ ? QString::fromStdString(bandSource_->planner) : QString();
        swatch(Qt::transparent, false,
               QString("%1 tensors, one bar each from producer to last reader; color = arena block under '%2'")
                   .arg(pl.lifetimes.size())
                   .arg(src));
    } else {
        swatch(QColor(40, 90, 180), false, "live bytes");
        swatch(QColor(200, 40, 40), true, "arena " + bytesText(static_cast<double>(pl.arenaBytes)));
        swatch(QColor(20, 140, 60), true, "lower bound " + bytesText(static_cast<double>(pl.lowerBoundBytes)));
        if (plan_->lowerBoundBytes > 0)
            swatch(Qt::transparent, false,
                   QString("arena / lower bound = %1").arg(double(pl.arenaBytes) / double(pl.lowerBoundBytes), 0, 'f', 3));
    }
}

// ---- interaction ---------------------------------------------------------------------------

int MemoryChartWidget::drawnItemCount() const {
    if (!plan_) return 0;
    plot::PlotArea a = plotArea(rect());
    if (kind_ == Kind::Arena) return static_cast<int>(plot::layoutArenaChart(*plan_, a).rects.size());
    if (kind_ == Kind::Lifetime) return static_cast<int>(plot::layoutLifetimeChart(*plan_, a).bars.size());
    return static_cast<int>(plan_->liveBytesPerStep.size());
}

int MemoryChartWidget::paintedItemCount() const {
    if (!plan_) return 0;
    plot::PlotArea a = plotArea(rect());
    if (kind_ == Kind::Arena) return static_cast<int>(plot::mergeSubPixelRects(plot::layoutArenaChart(*plan_, a).rects).size());
    if (kind_ == Kind::Lifetime) return static_cast<int>(plot::mergeSubPixelBars(plot::layoutLifetimeChart(*plan_, a).bars).size());
    return static_cast<int>(plot::decimateStepCurve(plot::layoutLiveBytes(*plan_, a).curve).size());
}

QPointF MemoryChartWidget::itemCenter(int index) const {
    if (!plan_) return {};
    plot::PlotArea a = plotArea(rect());
    if (kind_ == Kind::Arena) {
        auto g = plot::layoutArenaChart(*plan_, a);
        if (index >= 0 && index < static_cast<int>(g.rects.size())) return {g.rects[index].rect.centerX(), g.rects[index].rect.centerY()};
    } else if (kind_ == Kind::Lifetime) {
        for (const auto& b : plot::layoutLifetimeChart(*plan_, a).bars)
            if (b.tensor == index) return {b.rect.centerX(), b.rect.centerY()};
    } else {
        auto s = plot::layoutLiveBytes(*plan_, a);
        return {s.x.toPixel(index + 0.5), a.top + a.height / 2};
    }
    return {};
}

int MemoryChartWidget::itemAt(const QPointF& pos) const {
    if (!plan_) return -1;
    plot::PlotArea a = plotArea(rect());
    switch (kind_) {
    case Kind::Arena: return plot::layoutArenaChart(*plan_, a).hitTest(pos.x(), pos.y());
    case Kind::Lifetime: return plot::layoutLifetimeChart(*plan_, a).hitTest(pos.x(), pos.y());
    case Kind::LiveBytes:
        if (pos.y() < a.top || pos.y() > a.bottom()) return -1;
        return plot::layoutLiveBytes(*plan_, a).stepAt(pos.x());
    }
    return -1;
}

QString MemoryChartWidget::describeAt(const QPointF& pos) const {
    int i = itemAt(pos);
    if (i < 0 || !plan_) return {};
    const auto& pl = *plan_;
    if (kind_ == Kind::LiveBytes) {
        if (i >= static_cast<int>(pl.liveBytesPerStep.size())) return {};
        double live = static_cast<double>(pl.liveBytesPerStep[i]);
        return QString("<b>step %1</b><br>live %2 (%3% of the arena)")
            .arg(stepName(i).toHtmlEscaped(), bytesText(live))
            .arg(pl.arenaBytes > 0 ? 100.0 * live / static_cast<double>(pl.arenaBytes) : 0.0, 0, 'f', 1);
    }
    QString name, extra;
    int64_t bytes = 0;
    int first = 0, last = 0;
    if (kind_ == Kind::Arena) {
        const auto& b = pl.buffers[i];
        name = QString::fromStdString(b.name);
        bytes = b.bytes;
        first = b.first;
        last = b.last;
        extra = QString("<br>offset %1 … %2").arg(bytesText(static_cast<double>(b.offset)),
                                                  bytesText(static_cast<double>(b.offset + b.bytes)));
        if (b.inplaceOfIndex >= 0 && b.inplaceOfIndex < static_cast<int>(pl.buffers.size()))
            extra += "<br>in place of " + QString::fromStdString(pl.buffers[b.inplaceOfIndex].name).toHtmlEscaped();
    } else {
        const auto& t = pl.lifetimes[i];
        name = QString::fromStdString(t.name);
        bytes = t.bytes;
        first = t.first;
        last = t.last;
        if (i < static_cast<int>(pl.buffers.size()))
            extra = "<br>offset " + bytesText(static_cast<double>(pl.buffers[i].offset)) + " under " +
                    QString::fromStdString(pl.planner);
        if (t.isWorkspace) extra += "<br>(operator workspace)";
    }
    return QString("<b>%1</b><br>%2 (%3 bytes)<br>lifetime: steps %4 → %5%6")
        .arg(name.isEmpty() ? "(workspace)" : name.toHtmlEscaped(), bytesText(static_cast<double>(bytes)))
        .arg(bytes)
        .arg(stepName(first).toHtmlEscaped(), stepName(last).toHtmlEscaped(), extra);
}

bool MemoryChartWidget::setSelectedValue(ir::ValueId value) {
    int found = -1;
    if (plan_ && value != ir::kNone) {
        if (kind_ == Kind::Arena) {
            for (size_t i = 0; i < plan_->buffers.size() && found < 0; ++i)
                if (plan_->buffers[i].value == value) found = int(i);
        } else if (kind_ == Kind::Lifetime) {
            for (size_t i = 0; i < plan_->lifetimes.size() && found < 0; ++i)
                if (plan_->lifetimes[i].value == value) found = int(i);
        }
    }
    if (found != selected_) {
        selected_ = found;
        update();
    }
    return found >= 0;
}

void MemoryChartWidget::mouseMoveEvent(QMouseEvent* e) {
    int i = itemAt(e->position());
    if (i != hovered_) {
        hovered_ = i;
        update();
    }
    QString text = describeAt(e->position());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void MemoryChartWidget::leaveEvent(QEvent*) {
    hovered_ = -1;
    update();
}

void MemoryChartWidget::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || !plan_ || kind_ == Kind::LiveBytes) return;
    int i = itemAt(e->position());
    if (i < 0) return;
    ir::ValueId v = kind_ == Kind::Arena ? plan_->buffers[i].value : plan_->lifetimes[i].value;
    if (v != ir::kNone) emit valueClicked(v);
}

void MemoryChartWidget::contextMenuEvent(QContextMenuEvent* e) {
    QMenu menu(this);
    QAction* png = menu.addAction("Export chart as PNG…");
    QAction* svg = menu.addAction("Export chart as SVG…");
    png->setEnabled(plan_ != nullptr);
    svg->setEnabled(plan_ != nullptr);
    QAction* chosen = menu.exec(e->globalPos());
    if (chosen == png) {
        QString path = QFileDialog::getSaveFileName(this, "Export chart", objectName() + ".png", "PNG image (*.png)");
        if (!path.isEmpty()) exportPng(path);
    } else if (chosen == svg) {
        QString path = QFileDialog::getSaveFileName(this, "Export chart", objectName() + ".svg", "SVG drawing (*.svg)");
        if (!path.isEmpty()) exportSvg(path);
    }
}

// ---- export --------------------------------------------------------------------------------

bool MemoryChartWidget::exportPng(const QString& path, QSize size) const {
    if (!size.isValid() || size.isEmpty()) size = this->size().expandedTo(QSize(960, 400));
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::white);
    QPainter p(&image);
    paintChart(p, QRectF(QPointF(0, 0), size));
    p.end();
    return image.save(path, "PNG");
}

bool MemoryChartWidget::exportSvg(const QString& path, QSize size) const {
    if (!size.isValid() || size.isEmpty()) size = this->size().expandedTo(QSize(960, 400));
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(size);
    gen.setViewBox(QRect(QPoint(0, 0), size));
    gen.setTitle(chartTitle());
    gen.setDescription("PassLens memory chart");
    QPainter p;
    if (!p.begin(&gen)) return false;
    paintChart(p, QRectF(QPointF(0, 0), size));
    return p.end();
}

}  // namespace passlens::ui
