#include "memory/TrainingCharts.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "memory/BytesText.h"
#include "plot/Scale.h"

namespace passlens::ui {

namespace {
constexpr double kLeft = 8, kRight = 8, kTop = 26, kBottom = 22;
}  // namespace

QColor phaseColor(const std::string& phase) {
    if (phase == "backward") return QColor(214, 96, 77);
    if (phase == "loss") return QColor(240, 170, 60);
    if (phase == "recompute") return QColor(90, 170, 90);
    return QColor(80, 130, 200);
}

// ---- timeline ------------------------------------------------------------------------------

TrainingTimeline::TrainingTimeline(QWidget* parent) : QWidget(parent) {
    setObjectName("trainingTimeline");
    setMouseTracking(true);
}

void TrainingTimeline::setData(std::shared_ptr<const memory::MemoryPlan> plan,
                               std::shared_ptr<const autodiff::TrainingMemory> training) {
    plan_ = std::move(plan);
    training_ = std::move(training);
    order_.clear();
    steps_ = plan_ ? static_cast<int>(plan_->scheduleNames.size()) : 0;
    if (plan_) {
        for (size_t i = 0; i < plan_->buffers.size(); ++i) order_.push_back(static_cast<int>(i));
        std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) {
            return plan_->buffers[static_cast<size_t>(a)].first < plan_->buffers[static_cast<size_t>(b)].first;
        });
    }
    update();
}

void TrainingTimeline::clear() { setData(nullptr, nullptr); }

int TrainingTimeline::rowCount() const { return static_cast<int>(order_.size()); }

int TrainingTimeline::highlightedCount() const {
    if (!training_) return 0;
    int n = 0;
    for (int b : order_) n += !training_->buffers[static_cast<size_t>(b)].savedFor.empty();
    return n;
}

QRectF TrainingTimeline::plotRect() const {
    return QRectF(kLeft, kTop, std::max(10.0, width() - kLeft - kRight), std::max(10.0, height() - kTop - kBottom));
}

double TrainingTimeline::xOf(double step) const {
    const QRectF r = plotRect();
    return r.left() + r.width() * step / std::max(1, steps_);
}

double TrainingTimeline::boundaryX() const {
    if (!training_ || training_->phaseBoundaryStep < 0) return -1;
    return xOf(training_->phaseBoundaryStep);
}

QPointF TrainingTimeline::rowCenter(int row) const {
    const auto& b = plan_->buffers[static_cast<size_t>(order_.at(static_cast<size_t>(row)))];
    const QRectF r = plotRect();
    const double h = r.height() / std::max(1, rowCount());
    return {(xOf(b.first) + xOf(b.last + 1)) / 2, r.top() + h * (row + 0.5)};
}

int TrainingTimeline::rowAt(const QPointF& pos) const {
    if (!plan_ || order_.empty()) return -1;
    const QRectF r = plotRect();
    if (!r.contains(pos)) return -1;
    const int row = static_cast<int>((pos.y() - r.top()) / (r.height() / rowCount()));
    if (row < 0 || row >= rowCount()) return -1;
    const auto& b = plan_->buffers[static_cast<size_t>(order_[static_cast<size_t>(row)])];
    // A thin bar is hard to hit: accept a couple of pixels either side.
    if (pos.x() < xOf(b.first) - 2 || pos.x() > xOf(b.last + 1) + 2) return -1;
    return row;
}

QString TrainingTimeline::describeAt(const QPointF& pos) const {
    const int row = rowAt(pos);
    if (row < 0) return {};
    const size_t index = static_cast<size_t>(order_[static_cast<size_t>(row)]);
    const auto& b = plan_->buffers[index];
    const auto& ph = training_->buffers[index];
    QString text = QString("%1 (%2), steps %3–%4, %5")
                       .arg(QString::fromStdString(b.name), bytesText(static_cast<double>(b.bytes)))
                       .arg(b.first)
                       .arg(b.last)
                       .arg(QString::fromStdString(ph.phase));
    if (!ph.savedFor.empty()) {
        text += "\nsaved for backward, read by:";
        for (const auto& n : ph.savedFor) text += "\n  " + QString::fromStdString(n);
    }
    return text;
}

void TrainingTimeline::mouseMoveEvent(QMouseEvent* e) {
    const QString text = describeAt(e->position());
    if (text.isEmpty()) QToolTip::hideText();
    else QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void TrainingTimeline::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const QRectF r = plotRect();
    if (!plan_ || !training_ || order_.empty()) {
        p.setPen(palette().text().color());
        p.drawText(rect(), Qt::AlignCenter, "No training graph planned");
        return;
    }
    const double bx = boundaryX();
    if (bx >= 0) {
        p.fillRect(QRectF(r.left(), r.top(), bx - r.left(), r.height()), QColor(80, 130, 200, 22));
        p.fillRect(QRectF(bx, r.top(), r.right() - bx, r.height()), QColor(214, 96, 77, 22));
    }
    const double h = r.height() / rowCount();
    for (int row = 0; row < rowCount(); ++row) {
        const size_t index = static_cast<size_t>(order_[static_cast<size_t>(row)]);
        const auto& b = plan_->buffers[index];
        const auto& ph = training_->buffers[index];
        QRectF bar(xOf(b.first), r.top() + row * h, std::max(1.5, xOf(b.last + 1) - xOf(b.first)), std::max(1.0, h * 0.8));
        const bool saved = !ph.savedFor.empty();
        p.fillRect(bar, saved ? QColor(250, 200, 40) : phaseColor(ph.phase));
        if (saved && h >= 3) {
            p.setPen(QPen(QColor(120, 80, 0), 1));
            p.drawRect(bar);
        }
    }
    p.setPen(palette().text().color());
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    p.setFont(f);
    if (bx >= 0) {
        p.setPen(QPen(QColor(60, 60, 60), 2, Qt::DashLine));
        p.drawLine(QPointF(bx, r.top() - 4), QPointF(bx, r.bottom()));
        p.setPen(palette().text().color());
        p.drawText(QRectF(r.left(), 2, bx - r.left() - 6, kTop - 6), Qt::AlignRight | Qt::AlignVCenter, "forward ◀");
        p.drawText(QRectF(bx + 6, 2, r.right() - bx - 6, kTop - 6), Qt::AlignLeft | Qt::AlignVCenter,
                   QString("▶ loss + backward (from step %1)").arg(training_->phaseBoundaryStep));
    }
    p.drawText(QRectF(r.left(), r.bottom() + 2, r.width(), kBottom - 2), Qt::AlignLeft | Qt::AlignVCenter,
               QString("%1 buffers over %2 steps · saved for backward (amber): %3 · peak %4 at step %5 (%6)")
                   .arg(rowCount())
                   .arg(steps_)
                   .arg(highlightedCount())
                   .arg(bytesText(static_cast<double>(training_->peakBytes)))
                   .arg(training_->peakStep)
                   .arg(QString::fromStdString(training_->peakPhase)));
    // Legend: the phase colors, right-aligned on the same line.
    double x = r.right();
    for (const char* phase : {"recompute", "backward", "loss", "forward"}) {
        const QString label = QString::fromLatin1(phase);
        const double w = p.fontMetrics().horizontalAdvance(label);
        x -= w + 4;
        p.setPen(palette().text().color());
        p.drawText(QRectF(x, r.bottom() + 2, w + 4, kBottom - 2), Qt::AlignLeft | Qt::AlignVCenter, label);
        x -= 14;
        p.fillRect(QRectF(x, r.bottom() + 8, 10, 10), phaseColor(phase));
        x -= 8;
    }
}

// ---- trade-off chart ----------------------------------------------------------------------

TradeoffChart::TradeoffChart(QWidget* parent) : QWidget(parent) {
    setObjectName("tradeoffChart");
    setToolTip("The Pareto curve of recomputation (blue) with store-all, sqrt and all; click a point to plan at its arena");
}

void TradeoffChart::setPoints(std::vector<TradeoffPoint> points) {
    points_ = std::move(points);
    update();
}

void TradeoffChart::setCurrent(double extraPasses, int64_t peakBytes) {
    hasCurrent_ = true;
    current_ = {"", extraPasses, peakBytes};
    update();
}

QRectF TradeoffChart::plotRect() const { return QRectF(76, 22, std::max(10.0, width() - 90.0), std::max(10.0, height() - 52.0)); }

QPointF TradeoffChart::position(double extraPasses, int64_t peakBytes) const {
    double maxX = 0.25, maxY = 1;
    for (const auto& q : points_) {
        maxX = std::max(maxX, q.extraPasses);
        maxY = std::max(maxY, static_cast<double>(q.peakBytes));
    }
    maxX *= 1.1;
    maxY *= 1.1;
    const QRectF r = plotRect();
    return {r.left() + r.width() * extraPasses / maxX, r.bottom() - r.height() * static_cast<double>(peakBytes) / maxY};
}

int TradeoffChart::pointAt(const QPointF& pos) const {
    int best = -1;
    double bestDistance = 10;
    for (size_t i = 0; i < points_.size(); ++i) {
        const QPointF d = position(points_[i].extraPasses, points_[i].peakBytes) - pos;
        const double distance = std::hypot(d.x(), d.y());
        if (distance <= bestDistance) {
            best = static_cast<int>(i);
            bestDistance = distance;
        }
    }
    return best;
}

void TradeoffChart::mousePressEvent(QMouseEvent* e) {
    const int i = pointAt(e->position());
    if (i >= 0) emit pointClicked(i);
    QWidget::mousePressEvent(e);
}

void TradeoffChart::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const QRectF r = plotRect();
    p.setPen(palette().text().color());
    p.drawText(QRectF(0, 2, width(), 18), Qt::AlignCenter, "Arena vs extra forward passes");
    if (points_.empty()) {
        p.drawText(r, Qt::AlignCenter, "computing…");
        return;
    }
    const QPointF origin = position(0, 0), corner = position(1, 1);
    const double maxX = r.width() / (corner.x() - origin.x()), maxY = r.height() / (origin.y() - corner.y());
    auto at = [&](double x, double y) { return position(x, static_cast<int64_t>(std::llround(y))); };
    p.drawLine(r.bottomLeft(), r.bottomRight());
    p.drawLine(r.bottomLeft(), r.topLeft());
    for (double t : plot::niceTicks(0, maxY, 4)) {
        const QPointF a = at(0, t);
        p.drawText(QRectF(0, a.y() - 8, r.left() - 4, 16), Qt::AlignRight | Qt::AlignVCenter, bytesText(std::round(t)));
    }
    for (double t : plot::niceTicks(0, maxX, 5)) {
        const QPointF a = at(t, 0);
        p.drawText(QRectF(a.x() - 20, r.bottom() + 2, 40, 14), Qt::AlignCenter, QString::number(t, 'g', 2));
    }
    // The Pareto curve as a line (sorted by extra work), the references as labelled dots.
    std::vector<TradeoffPoint> curve;
    for (const auto& q : points_)
        if (q.onCurve) curve.push_back(q);
    std::sort(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.extraPasses < b.extraPasses; });
    p.setPen(QPen(QColor(80, 130, 200), 1.5));
    for (size_t i = 1; i < curve.size(); ++i)
        p.drawLine(at(curve[i - 1].extraPasses, static_cast<double>(curve[i - 1].peakBytes)),
                   at(curve[i].extraPasses, static_cast<double>(curve[i].peakBytes)));
    for (const auto& q : points_) {
        const QPointF c = at(q.extraPasses, static_cast<double>(q.peakBytes));
        p.setPen(Qt::NoPen);
        p.setBrush(q.onCurve ? QColor(80, 130, 200) : QColor(120, 120, 120));
        p.drawEllipse(c, q.onCurve ? 3.0 : 4.0, q.onCurve ? 3.0 : 4.0);
        if (q.label.isEmpty()) continue;
        p.setPen(palette().text().color());
        p.drawText(c + QPointF(5, -4), q.label);
    }
    if (hasCurrent_) {
        p.setPen(QPen(QColor(200, 60, 40), 2));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(at(current_.extraPasses, static_cast<double>(current_.peakBytes)), 7, 7);
    }
}

}  // namespace passlens::ui
