#pragma once
// Geometry of the three memory charts, computed from a MemoryPlan for a pixel area:
// - lifetime chart: one bar per dynamic tensor over schedule steps, rows ordered by first step;
// - arena chart: x = step, y = arena offset, one rectangle per buffer (the buffer-sharing
//   timeline); buffers starting at the same offset share a band (and a color);
// - live-bytes series: bytes live at each step as a step curve, with the lower bound and the
//   planned arena as horizontal lines.
// The x axes run from firstActiveStep to the last step. A step s spans [s, s+1) on the x axis, so a buffer living [first, last] covers [first, last+1);
// an in-place pair splits its hand-off step at s + 0.5, so rectangles never overlap.
#include <cstdint>
#include <string>
#include <vector>

#include "memory/MemoryPlan.h"
#include "plot/Scale.h"

namespace passlens::plot {

/// Where the data is drawn inside the widget (axes and labels go around it).
struct PlotArea {
    double left = 0, top = 0, width = 0, height = 0;
    double right() const { return left + width; }
    double bottom() const { return top + height; }
};

struct ArenaRect {
    int buffer = -1;  ///< index into plan.buffers
    int band = 0;     ///< index into ArenaChartGeometry::bandOffsets
    Rect rect;
};

struct ArenaChartGeometry {
    LinearScale x, y;                   ///< step → px, offset bytes → px (inverted)
    std::vector<ArenaRect> rects;       ///< in plan.buffers order
    std::vector<int64_t> bandOffsets;   ///< distinct start offsets, ascending; band i starts at [i]
    std::vector<Tick> xTicks, yTicks;
    Rect arenaOutline;                  ///< [0, steps) × [0, arenaBytes)

    /// Index into plan.buffers of the buffer under the point, or -1. When rectangles touch (an
    /// in-place hand-off step) the later buffer wins, as it is drawn on top.
    int hitTest(double px, double py) const;
};

/// Bands: the distinct start offsets of the buffers, sorted ascending (tensors that reuse the same
/// memory block begin at the same offset, so they share a band and a color).
std::vector<int64_t> assignBands(const std::vector<memory::BufferAssignment>& buffers, std::vector<int>* bandOfBuffer);

ArenaChartGeometry layoutArenaChart(const memory::MemoryPlan& plan, const PlotArea& area);

struct LifetimeBar {
    int tensor = -1;  ///< index into plan.lifetimes
    int row = 0;
    Rect rect;
};

struct LifetimeChartGeometry {
    LinearScale x, y;   ///< step → px, row → px (row 0 at the top)
    std::vector<LifetimeBar> bars;  ///< in row order
    std::vector<Tick> xTicks;
    int hitTest(double px, double py) const;  ///< index into plan.lifetimes, or -1
};

/// Rows ordered by first step, then last step, then lifetime index.
LifetimeChartGeometry layoutLifetimeChart(const memory::MemoryPlan& plan, const PlotArea& area);

/// Level of detail for drawing (hit tests keep the full bars): with 20k tensors a row is a small
/// fraction of a pixel, and drawing every bar costs 20k fills per repaint for a few hundred pixel
/// rows. Bars (in row order) whose rows fall into the same `pixel` row merge where they overlap or
/// come within a pixel of each other; each merged piece is one pixel row high and keeps the tensor
/// (color) of its first bar. Bars at least a pixel high come back unchanged. Every x covered by a
/// bar stays covered in its pixel row.
std::vector<LifetimeBar> mergeSubPixelBars(const std::vector<LifetimeBar>& bars, double pixel = 1.0);

struct Point {
    double x = 0, y = 0;
};

struct LiveBytesSeries {
    LinearScale x, y;
    std::vector<Point> curve;   ///< step curve: (x(s), y(live[s])), (x(s+1), y(live[s])) per step
    double lowerBoundY = 0;     ///< pixel y of the lower-bound line
    double arenaY = 0;          ///< pixel y of the planned-arena line
    int64_t maxLive = 0;
    int peakStep = -1;          ///< first step with the most live bytes
    std::vector<Tick> xTicks, yTicks;
    /// Step under x pixel, or -1 outside the steps.
    int stepAt(double px) const;
};

LiveBytesSeries layoutLiveBytes(const memory::MemoryPlan& plan, const PlotArea& area);

/// Level of detail for the arena chart: rectangles smaller than a `pixel` in width or height
/// (20k buffers on a few hundred pixels) become pixel-row runs: every
/// pixel they touch, joined left to right where they touch, so one repaint fills a few thousand
/// runs instead of every buffer. A run keeps the buffer and band (color) of its leftmost piece: a
/// pixel shows one color however many sub-pixel buffers share it. Other rectangles come back
/// unchanged (first); every pixel a small rectangle touched stays covered. Hit tests keep the
/// full set.
std::vector<ArenaRect> mergeSubPixelRects(const std::vector<ArenaRect>& rects, double pixel = 1.0);

/// Level of detail for the live-bytes curve: with more steps than pixel columns, each column keeps
/// the value it starts with, its lowest and highest and the one it ends with (at most four points
/// per column, in x order), so the peak and the dips stay visible and the path stays short. A
/// curve with steps at least `pixel` wide comes back unchanged.
std::vector<Point> decimateStepCurve(const std::vector<Point>& curve, double pixel = 1.0);

/// Number of schedule steps of a plan (at least 1 so scales never collapse).
int stepCount(const memory::MemoryPlan& plan);
/// First step that produces a planned tensor. The x axes start there: on real models the first
/// hundreds of steps are often Constant nodes that allocate nothing in the arena.
int firstActiveStep(const memory::MemoryPlan& plan);

}  // namespace passlens::plot
