#include "layout/EdgeLabels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace passlens::layout {

namespace {

constexpr double kGap = 4;  // between the line and its label

// Placed rectangles bucketed in square cells, so a candidate is checked against its neighbours only.
class RectGrid {
public:
    explicit RectGrid(double cell) : cell_(cell) {}

    void add(const Rect& r) {
        const size_t index = rects_.size();
        rects_.push_back(r);
        forEachCell(r, [&](int64_t key) { cells_[key].push_back(index); });
    }

    bool hits(const Rect& r) const {
        bool hit = false;
        forEachCell(r, [&](int64_t key) {
            if (hit) return;
            auto it = cells_.find(key);
            if (it == cells_.end()) return;
            for (size_t i : it->second)
                if (rectsOverlap(r, rects_[i])) { hit = true; return; }
        });
        return hit;
    }

private:
    template <class F>
    void forEachCell(const Rect& r, F&& f) const {
        const int64_t x0 = static_cast<int64_t>(std::floor(r.x / cell_)), x1 = static_cast<int64_t>(std::floor(r.right() / cell_));
        const int64_t y0 = static_cast<int64_t>(std::floor(r.y / cell_)), y1 = static_cast<int64_t>(std::floor(r.bottom() / cell_));
        for (int64_t y = y0; y <= y1; ++y)
            for (int64_t x = x0; x <= x1; ++x) f((y << 32) ^ (x & 0xffffffff));
    }

    double cell_;
    std::vector<Rect> rects_;
    std::unordered_map<int64_t, std::vector<size_t>> cells_;
};

}  // namespace

bool rectsOverlap(const Rect& a, const Rect& b) {
    return a.x < b.right() && b.x < a.right() && a.y < b.bottom() && b.y < a.bottom();
}

namespace {

// The path as a polyline: a cubic Bézier path (1 + 3k points) sampled along its curves, so the
// points lie on what is drawn (control points stand off the curve); anything else as given.
std::vector<Point> curvePoints(const std::vector<Point>& points) {
    if (points.size() < 4 || (points.size() - 1) % 3 != 0) return points;
    constexpr int kSamples = 8;
    std::vector<Point> out{points.front()};
    for (size_t i = 0; i + 3 < points.size(); i += 3) {
        const Point p0 = points[i], p1 = points[i + 1], p2 = points[i + 2], p3 = points[i + 3];
        for (int k = 1; k <= kSamples; ++k) {
            const double t = double(k) / kSamples, u = 1 - t;
            const double a = u * u * u, b = 3 * u * u * t, c = 3 * u * t * t, d = t * t * t;
            out.push_back({a * p0.x + b * p1.x + c * p2.x + d * p3.x, a * p0.y + b * p1.y + c * p2.y + d * p3.y});
        }
    }
    return out;
}

}  // namespace

Point pointAlongPath(const std::vector<Point>& path, double fraction) {
    const std::vector<Point> points = curvePoints(path);
    if (points.empty()) return {};
    if (points.size() == 1) return points.front();
    double total = 0;
    for (size_t i = 1; i < points.size(); ++i)
        total += std::hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y);
    const double target = total * std::clamp(fraction, 0.0, 1.0);
    double walked = 0;
    for (size_t i = 1; i < points.size(); ++i) {
        const double seg = std::hypot(points[i].x - points[i - 1].x, points[i].y - points[i - 1].y);
        if (walked + seg >= target && seg > 0) {
            const double t = (target - walked) / seg;
            return {points[i - 1].x + t * (points[i].x - points[i - 1].x), points[i - 1].y + t * (points[i].y - points[i - 1].y)};
        }
        walked += seg;
    }
    return points.back();
}

Rect labelRectAt(Point anchor, LabelSize size, bool leftSide) {
    const double x = leftSide ? anchor.x - kGap - size.width : anchor.x + kGap;
    return {x, anchor.y - size.height / 2, size.width, size.height};
}

std::vector<std::optional<Rect>> placeEdgeLabels(const std::vector<EdgePath>& edges, const std::vector<LabelSize>& sizes,
                                                 const std::vector<Rect>& obstacles) {
    // Middle first (where a reader looks for it), then outward; the ends stay free for arrow heads.
    static constexpr double kFractions[] = {0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78, 0.15, 0.85};
    double cell = 64;
    for (const auto& s : sizes) cell = std::max(cell, s.width);
    RectGrid taken(cell);
    for (const Rect& r : obstacles) taken.add(r);
    std::vector<std::optional<Rect>> out(edges.size());
    for (size_t i = 0; i < edges.size() && i < sizes.size(); ++i) {
        const LabelSize size = sizes[i];
        if (size.width <= 0 || size.height <= 0 || edges[i].points.empty()) continue;
        for (double f : kFractions) {
            const Point at = f == 0.5 ? edges[i].labelAnchor : pointAlongPath(edges[i].points, f);
            for (bool left : {false, true}) {
                const Rect r = labelRectAt(at, size, left);
                if (taken.hits({r.x - 1, r.y - 1, r.width + 2, r.height + 2})) continue;  // never touching
                taken.add(r);
                out[i] = r;
                break;
            }
            if (out[i]) break;
        }
    }
    return out;
}

}  // namespace passlens::layout
