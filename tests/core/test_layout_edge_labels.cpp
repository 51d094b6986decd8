// Edge labels placed where they read: never over another label or a box, beside their own edge.
#include <gtest/gtest.h>

#include <cmath>

#include "layout/EdgeLabels.h"

using namespace passlens::layout;

namespace {

EdgePath straight(Point a, Point b) {
    EdgePath e;
    e.points = {a, {a.x + (b.x - a.x) / 3, a.y + (b.y - a.y) / 3}, {a.x + 2 * (b.x - a.x) / 3, a.y + 2 * (b.y - a.y) / 3}, b};
    e.labelAnchor = pathMidpoint(e.points);
    return e;
}

/// Distance from p to the path's control polygon.
double distanceToPath(const EdgePath& e, Point p) {
    double best = 1e9;
    for (size_t i = 1; i < e.points.size(); ++i) {
        const Point a = e.points[i - 1], b = e.points[i];
        const double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
        double t = len2 > 0 ? ((p.x - a.x) * dx + (p.y - a.y) * dy) / len2 : 0;
        t = std::fmax(0, std::fmin(1, t));
        best = std::fmin(best, std::hypot(p.x - a.x - t * dx, p.y - a.y - t * dy));
    }
    return best;
}

}  // namespace

TEST(EdgeLabels, PointAlongPathWalksTheControlPolygon) {
    const std::vector<Point> l = {{0, 0}, {0, 10}, {10, 10}};
    EXPECT_EQ(pointAlongPath(l, 0.5), (Point{0, 10}));
    EXPECT_EQ(pointAlongPath(l, 0.25), (Point{0, 5}));
    EXPECT_EQ(pointAlongPath(l, 1.0), (Point{10, 10}));
    EXPECT_EQ(pointAlongPath(l, 0.5), pathMidpoint(l));
}

TEST(EdgeLabels, ACurvedPathIsWalkedOnTheCurveNotItsControlPoints) {
    // A symmetric bulge: the control polygon's middle is (100, 50), the curve's is (75, 50).
    const std::vector<Point> arc = {{0, 0}, {100, 0}, {100, 100}, {0, 100}};
    const Point m = pointAlongPath(arc, 0.5);
    EXPECT_NEAR(m.x, 75, 1.0);
    EXPECT_NEAR(m.y, 50, 1e-6);
    EXPECT_EQ(pathMidpoint(arc), m);
}

TEST(EdgeLabels, ConvergingEdgesGetLabelsThatDoNotOverlap) {
    // Eight edges from a row of boxes into one box below: their midpoints crowd together, so
    // labels at the midpoints would overlap (checked first, so the test can fail).
    std::vector<Rect> boxes = {{180, 300, 40, 20}};
    std::vector<EdgePath> edges;
    for (int i = 0; i < 8; ++i) {
        boxes.push_back({i * 50.0, 0, 40, 20});
        edges.push_back(straight({i * 50.0 + 20, 20}, {200, 300}));
    }
    const std::vector<LabelSize> sizes(edges.size(), LabelSize{90, 10});
    int midpointOverlaps = 0;
    for (size_t i = 0; i < edges.size(); ++i)
        for (size_t j = i + 1; j < edges.size(); ++j)
            midpointOverlaps += rectsOverlap(labelRectAt(edges[i].labelAnchor, sizes[i], false),
                                             labelRectAt(edges[j].labelAnchor, sizes[j], false));
    ASSERT_GT(midpointOverlaps, 0);

    const auto placed = placeEdgeLabels(edges, sizes, boxes);
    ASSERT_EQ(placed.size(), edges.size());
    int shown = 0;
    for (size_t i = 0; i < placed.size(); ++i) {
        if (!placed[i]) continue;
        ++shown;
        EXPECT_DOUBLE_EQ(placed[i]->width, 90);
        for (size_t j = i + 1; j < placed.size(); ++j)
            if (placed[j]) {
                EXPECT_FALSE(rectsOverlap(*placed[i], *placed[j])) << i << " and " << j;
            }
        for (const Rect& b : boxes) EXPECT_FALSE(rectsOverlap(*placed[i], b)) << i;
        // Beside its own edge: the near side of the label touches the line within the gap.
        const Rect& r = *placed[i];
        const double nearSide = std::fmin(distanceToPath(edges[i], {r.x, r.y + r.height / 2}),
                                          distanceToPath(edges[i], {r.right(), r.y + r.height / 2}));
        EXPECT_LE(nearSide, 6.0) << i;
    }
    EXPECT_GE(shown, 6);
}

TEST(EdgeLabels, ALabelWithNoFreePlaceIsLeftOut) {
    // A short edge inside a wall of boxes: every candidate place is covered.
    const std::vector<Rect> boxes = {{-200, -200, 400, 400}};
    const std::vector<EdgePath> edges = {straight({0, -50}, {0, 50})};
    const auto placed = placeEdgeLabels(edges, {LabelSize{30, 10}}, boxes);
    EXPECT_FALSE(placed[0]);
}

TEST(EdgeLabels, UnlabelledEdgesTakeNoRoom) {
    const std::vector<EdgePath> edges = {straight({0, 0}, {0, 100}), straight({0, 0}, {0, 100})};
    const auto placed = placeEdgeLabels(edges, {LabelSize{}, LabelSize{40, 10}}, {});
    EXPECT_FALSE(placed[0]);
    ASSERT_TRUE(placed[1]);
    // The middle was free for the second edge since the first one has no label.
    EXPECT_NEAR(placed[1]->y + placed[1]->height / 2, 50, 1e-9);
}
