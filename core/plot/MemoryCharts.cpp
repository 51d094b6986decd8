#include "plot/MemoryCharts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

namespace passlens::plot {

int firstActiveStep(const memory::MemoryPlan& plan);

namespace {
constexpr int kMaxXTicks = 12;
constexpr int kMaxYTicks = 8;

LinearScale stepScale(const memory::MemoryPlan& plan, const PlotArea& a) {
    return {static_cast<double>(firstActiveStep(plan)), static_cast<double>(stepCount(plan)), a.left, a.right()};
}

/// y domain top: the largest value rounded up to the next byte tick, so the top tick is labeled.
double niceTop(double maxValue) {
    if (maxValue <= 0) return 1;
    std::vector<double> t = byteTicks(0, maxValue, kMaxYTicks);
    double step = t.size() >= 2 ? t[1] - t[0] : maxValue;
    double top = t.empty() ? maxValue : t.back();
    while (top < maxValue) top += step;
    return top;
}
}  // namespace

int firstActiveStep(const memory::MemoryPlan& plan) {
    int first = stepCount(plan) - 1;
    bool any = false;
    for (const auto& b : plan.buffers) { first = std::min(first, b.first); any = true; }
    for (const auto& t : plan.lifetimes) { first = std::min(first, t.first); any = true; }
    return any ? std::max(first, 0) : 0;
}

int stepCount(const memory::MemoryPlan& plan) {
    int steps = static_cast<int>(std::max(plan.scheduleNames.size(), plan.liveBytesPerStep.size()));
    for (const auto& b : plan.buffers) steps = std::max(steps, b.last + 1);
    for (const auto& t : plan.lifetimes) steps = std::max(steps, t.last + 1);
    return std::max(steps, 1);
}

std::vector<int64_t> assignBands(const std::vector<memory::BufferAssignment>& buffers, std::vector<int>* bandOfBuffer) {
    std::vector<int64_t> offsets;
    offsets.reserve(buffers.size());
    for (const auto& b : buffers) offsets.push_back(b.offset);
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    if (bandOfBuffer) {
        bandOfBuffer->clear();
        for (const auto& b : buffers)
            bandOfBuffer->push_back(static_cast<int>(std::lower_bound(offsets.begin(), offsets.end(), b.offset) - offsets.begin()));
    }
    return offsets;
}

ArenaChartGeometry layoutArenaChart(const memory::MemoryPlan& plan, const PlotArea& area) {
    ArenaChartGeometry g;
    int64_t top = plan.arenaBytes;
    for (const auto& b : plan.buffers) top = std::max(top, b.offset + b.bytes);
    g.x = stepScale(plan, area);
    g.y = {0, niceTop(static_cast<double>(top)), area.bottom(), area.top};
    std::vector<int> bandOf;
    g.bandOffsets = assignBands(plan.buffers, &bandOf);
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
        const auto& b = plan.buffers[i];
        double x0 = g.x.toPixel(b.first), x1 = g.x.toPixel(b.last + 1);
        double yTop = g.y.toPixel(static_cast<double>(b.offset + b.bytes));
        double yBottom = g.y.toPixel(static_cast<double>(b.offset));
        g.rects.push_back({static_cast<int>(i), bandOf[i], {x0, yTop, x1 - x0, yBottom - yTop}});
    }
    // In-place hand-off: the successor overwrites its input during step `first` (= the input's
    // last step). Split that step between the two so the rectangles do not overlap.
    std::unordered_map<ir::ValueId, size_t> bufferOfValue;
    for (size_t i = 0; i < plan.buffers.size(); ++i)
        if (plan.buffers[i].value != ir::kNone) bufferOfValue[plan.buffers[i].value] = i;
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
        const auto& b = plan.buffers[i];
        size_t host;
        if (b.inplaceOfIndex >= 0 && static_cast<size_t>(b.inplaceOfIndex) < plan.buffers.size()) {
            host = static_cast<size_t>(b.inplaceOfIndex);  // planners keep buffers[i] ↔ lifetimes[i]
        } else if (b.inplaceOf && bufferOfValue.count(*b.inplaceOf)) {
            host = bufferOfValue[*b.inplaceOf];
        } else {
            continue;
        }
        const auto& a = plan.buffers[host];
        if (a.offset != b.offset || a.last != b.first) continue;
        double mid = g.x.toPixel(b.first + 0.5);
        Rect& ra = g.rects[host].rect;
        Rect& rb = g.rects[i].rect;
        ra.width = mid - ra.x;
        rb.width = rb.x + rb.width - mid;
        rb.x = mid;
    }
    double arenaTop = g.y.toPixel(static_cast<double>(plan.arenaBytes));
    g.arenaOutline = {area.left, arenaTop, area.width, area.bottom() - arenaTop};
    g.xTicks = makeTicks(g.x, kMaxXTicks, false);
    g.yTicks = makeTicks(g.y, kMaxYTicks, true);
    return g;
}

int ArenaChartGeometry::hitTest(double px, double py) const {
    // Tiny buffers are thinner than a pixel: widen the hit box to at least 3 px high.
    for (auto it = rects.rbegin(); it != rects.rend(); ++it) {
        Rect r = it->rect;
        if (r.height < 3) { r.y = r.centerY() - 1.5; r.height = 3; }
        if (r.contains(px, py)) return it->buffer;
    }
    return -1;
}

LifetimeChartGeometry layoutLifetimeChart(const memory::MemoryPlan& plan, const PlotArea& area) {
    LifetimeChartGeometry g;
    std::vector<int> order(plan.lifetimes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        const auto &ta = plan.lifetimes[a], &tb = plan.lifetimes[b];
        if (ta.first != tb.first) return ta.first < tb.first;
        return ta.last < tb.last;
    });
    int rows = std::max<int>(1, static_cast<int>(order.size()));
    g.x = stepScale(plan, area);
    g.y = {0, static_cast<double>(rows), area.top, area.bottom()};
    for (int row = 0; row < static_cast<int>(order.size()); ++row) {
        const auto& t = plan.lifetimes[order[row]];
        double x0 = g.x.toPixel(t.first), x1 = g.x.toPixel(t.last + 1);
        double y0 = g.y.toPixel(row), y1 = g.y.toPixel(row + 1);
        g.bars.push_back({order[row], row, {x0, y0, x1 - x0, y1 - y0}});
    }
    g.xTicks = makeTicks(g.x, kMaxXTicks, false);
    return g;
}

int LifetimeChartGeometry::hitTest(double px, double py) const {
    if (bars.empty()) return -1;
    int row = static_cast<int>(y.toDomain(py));
    if (py < y.rangeStart || row < 0 || row >= static_cast<int>(bars.size())) return -1;
    // Rows thinner than a pixel: look at the rows this pixel covers and take the first whose bar
    // spans the x position.
    int rowsPerPixel = std::max(1, static_cast<int>(std::ceil((y.domainEnd - y.domainStart) / std::max(1.0, y.rangeEnd - y.rangeStart))));
    for (int r = row; r < std::min<int>(row + rowsPerPixel, static_cast<int>(bars.size())); ++r) {
        const Rect& b = bars[r].rect;
        if (px >= b.x && px < b.x + b.width) return bars[r].tensor;
    }
    return -1;
}

LiveBytesSeries layoutLiveBytes(const memory::MemoryPlan& plan, const PlotArea& area) {
    LiveBytesSeries s;
    const auto& live = plan.liveBytesPerStep;
    for (size_t i = 0; i < live.size(); ++i)
        if (live[i] > s.maxLive) { s.maxLive = live[i]; s.peakStep = static_cast<int>(i); }
    double top = std::max<double>({static_cast<double>(s.maxLive), static_cast<double>(plan.arenaBytes),
                                   static_cast<double>(plan.lowerBoundBytes)});
    s.x = stepScale(plan, area);
    s.y = {0, niceTop(top), area.bottom(), area.top};
    for (size_t i = static_cast<size_t>(s.x.domainStart); i < live.size(); ++i) {
        double y = s.y.toPixel(static_cast<double>(live[i]));
        s.curve.push_back({s.x.toPixel(static_cast<double>(i)), y});
        s.curve.push_back({s.x.toPixel(static_cast<double>(i + 1)), y});
    }
    s.lowerBoundY = s.y.toPixel(static_cast<double>(plan.lowerBoundBytes));
    s.arenaY = s.y.toPixel(static_cast<double>(plan.arenaBytes));
    s.xTicks = makeTicks(s.x, kMaxXTicks, false);
    s.yTicks = makeTicks(s.y, kMaxYTicks, true);
    return s;
}

int LiveBytesSeries::stepAt(double px) const {
    double v = x.toDomain(px);
    if (v < x.domainStart || v >= x.domainEnd) return -1;
    return static_cast<int>(v);
}

}  // namespace passlens::plot

namespace passlens::plot {

std::vector<LifetimeBar> mergeSubPixelBars(const std::vector<LifetimeBar>& bars, double pixel) {
    if (bars.empty() || bars.front().rect.height >= pixel) return bars;
    std::vector<LifetimeBar> out;
    size_t i = 0;
    while (i < bars.size()) {
        // One pixel row: the run of bars whose top falls into it.
        const double rowIndex = std::floor(bars[i].rect.y / pixel);
        size_t j = i;
        while (j < bars.size() && std::floor(bars[j].rect.y / pixel) == rowIndex) ++j;
        std::vector<const LifetimeBar*> row;
        for (size_t k = i; k < j; ++k) row.push_back(&bars[k]);
        std::stable_sort(row.begin(), row.end(), [](const LifetimeBar* a, const LifetimeBar* b) { return a->rect.x < b->rect.x; });
        LifetimeBar piece;
        bool open = false;
        for (const LifetimeBar* b : row) {
            if (open && b->rect.x <= piece.rect.x + piece.rect.width + pixel) {
                piece.rect.width = std::max(piece.rect.width, b->rect.x + b->rect.width - piece.rect.x);
                continue;
            }
            if (open) out.push_back(piece);
            piece = *b;
            piece.rect.y = rowIndex * pixel;
            piece.rect.height = pixel;
            open = true;
        }
        if (open) out.push_back(piece);
        i = j;
    }
    return out;
}

std::vector<ArenaRect> mergeSubPixelRects(const std::vector<ArenaRect>& rects, double pixel) {
    // Small = narrower or lower than a pixel. A tall, narrow buffer (big, short-lived) becomes a
    // span in each pixel row it crosses; its neighbours in time then join it row by row.
    auto small = [&](const ArenaRect& r) { return r.rect.width < pixel || r.rect.height < pixel; };
    std::vector<ArenaRect> out;
    // Pixel row -> [x0, x1) pixel spans. With thousands of bands (one per start offset) a pixel
    // shows one color anyway, so spans of any band join; a run keeps the buffer and band of its
    // leftmost span, as the lifetime LOD keeps the color of its first bar.
    struct Span { double x0, x1; int buffer, band; };
    std::map<long long, std::vector<Span>> rows;
    for (const auto& r : rects) {
        if (!small(r)) {
            out.push_back(r);
            continue;
        }
        const double x0 = std::floor(r.rect.x / pixel), x1 = std::max(x0 + 1, std::ceil((r.rect.x + r.rect.width) / pixel));
        const auto y0 = static_cast<long long>(std::floor(r.rect.y / pixel));
        const auto y1 = std::max(y0 + 1, static_cast<long long>(std::ceil((r.rect.y + r.rect.height) / pixel)));
        for (long long y = y0; y < y1; ++y) rows[y].push_back({x0, x1, r.buffer, r.band});
    }
    if (rows.empty()) return rects;
    for (auto& [y, spans] : rows) {
        std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.x0 < b.x0; });
        Span run = spans.front();
        auto flush = [&, row = y] {
            out.push_back({run.buffer, run.band, {run.x0 * pixel, double(row) * pixel, (run.x1 - run.x0) * pixel, pixel}});
        };
        for (size_t i = 1; i < spans.size(); ++i) {
            if (spans[i].x0 <= run.x1) {
                run.x1 = std::max(run.x1, spans[i].x1);
                continue;
            }
            flush();
            run = spans[i];
        }
        flush();
    }
    return out;
}

std::vector<Point> decimateStepCurve(const std::vector<Point>& curve, double pixel) {
    if (curve.size() < 4) return curve;
    // Step widths: the curve holds two points per step, (x(s), y) and (x(s+1), y).
    if (curve[1].x - curve[0].x >= pixel) return curve;
    std::vector<Point> out;
    size_t i = 0;
    while (i < curve.size()) {
        const double column = std::floor(curve[i].x / pixel);
        size_t j = i;
        double lo = curve[i].y, hi = curve[i].y;
        while (j < curve.size() && std::floor(curve[j].x / pixel) == column) {
            lo = std::min(lo, curve[j].y);
            hi = std::max(hi, curve[j].y);
            ++j;
        }
        const Point& first = curve[i];
        const Point& last = curve[j - 1];
        out.push_back(first);
        // Pixel y grows downwards: the highest value is the smallest y.
        if (lo != first.y && lo != last.y) out.push_back({first.x, lo});
        if (hi != first.y && hi != last.y) out.push_back({first.x, hi});
        if (j - 1 != i) out.push_back(last);
        i = j;
    }
    return out;
}

}  // namespace passlens::plot
