#pragma once
// Graphviz `dot` layout as plain data (no Qt): the caller describes boxes and edges, runs the
// layout (in any thread: every Graphviz call is serialized by one process-wide mutex), and gets
// back box centers, edge splines as cubic Bézier control points, label anchors and the bounding
// box, all in a y-down coordinate system with the origin at the top-left of the drawing.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace passlens::layout {

struct Point {
    double x = 0, y = 0;
    bool operator==(const Point&) const = default;
};

struct Rect {
    double x = 0, y = 0, width = 0, height = 0;  ///< top-left corner, y down
    double right() const { return x + width; }
    double bottom() const { return y + height; }
    bool contains(Point p) const { return p.x >= x && p.x <= right() && p.y >= y && p.y <= bottom(); }
};

/// One box to place. Sizes in points (1/72 inch), the unit Graphviz works in.
struct BoxRequest {
    uint32_t key = 0;   ///< caller's id, echoed back
    double width = 0, height = 0;
    // Only used when Graphviz renders the drawing itself (CLI svg/png/dot):
    std::string label;  ///< lines separated by '\n'
    std::string fillColor, borderColor;
};

struct EdgeRequest {
    uint32_t from = 0, to = 0;  ///< box keys
    std::string label;          ///< drawn by Graphviz renderers only; the app draws its own
    int weight = 1;             ///< how hard `dot` keeps the edge short and straight
};

struct LayoutOptions {
    /// Network-simplex iteration factor for x coordinates (iterations = nslimit × nodes). Graphviz's
    /// default is unlimited, which costs seconds on long DAGs with skip connections.
    std::optional<double> nslimit = 0.1;
    std::optional<double> nslimit1;       ///< same, for ranking
    std::optional<double> mclimit;        ///< crossing-minimization effort factor
    std::optional<int> searchsize;        ///< edges network simplex scans for a negative cut value
    double rankSeparation = 0.45;         ///< inches
    double nodeSeparation = 0.35;         ///< inches
    bool orthogonal = false;              ///< splines=ortho (slow on large graphs)
    bool leftToRight = false;             ///< rankdir=LR: ranks run left to right (a tree in a wide, short dock)
};

struct BoxPlacement {
    uint32_t key = 0;
    Rect rect;          ///< y down
    Point center() const { return {rect.x + rect.width / 2, rect.y + rect.height / 2}; }
};

/// A cubic Bézier path: points[0], then (control1, control2, end) triples.
struct EdgePath {
    uint32_t from = 0, to = 0;
    std::vector<Point> points;
    std::optional<Point> arrowTip;    ///< where the arrow head points to (the head box border)
    Point labelAnchor;                ///< middle of the path, where a label goes
};

struct LayoutResult {
    std::vector<BoxPlacement> boxes;  ///< same order as the request's boxes
    std::vector<EdgePath> edges;      ///< same order as the request's edges
    Rect bounds;                      ///< contains every box and path
    double seconds = 0;               ///< wall time of the Graphviz layout itself
    /// Why the simple layered placement stands in for Graphviz ("" when Graphviz laid it out).
    std::string fallbackReason;
};

struct LayoutRequest {
    std::vector<BoxRequest> boxes;
    std::vector<EdgeRequest> edges;
    LayoutOptions options;
};

/// Lays out with `dot` on a thread with a large stack (see LargeStack.h). Thread-safe (serialized).
/// Options left unset are tuned by size (tunedOptions). Throws passlens::Error on a Graphviz failure.
LayoutResult layoutGraph(const LayoutRequest& request);

/// The most boxes handed to Graphviz in one call; beyond, layoutOrFallBack places them itself.
inline constexpr size_t kMaxGraphvizBoxes = 1500;

/// Graphviz when the request is small enough and the layout succeeds, else layeredLayout with
/// `fallbackReason` set. Never throws for a well-formed request.
LayoutResult layoutOrFallBack(const LayoutRequest& request);

/// `options` with the effort knobs the caller left unset chosen for `boxes` boxes: full effort on
/// small graphs, fewer crossing-minimization and network-simplex rounds as graphs grow.
LayoutOptions tunedOptions(LayoutOptions options, size_t boxes);

/// Lays out and writes the drawing with Graphviz's own renderer ("svg", "png", "dot", "pdf", ...).
/// Throws passlens::Error(BadInput) when the format has no renderer plugin.
void renderWithGraphviz(const LayoutRequest& request, const std::string& format, const std::string& path);

/// A labelled frame drawn under the boxes (an expanded group).
struct PlacedFrame {
    uint32_t key = 0;   ///< edges may end at the frame (an edge into an open group)
    Rect rect;
    std::string label;
};

/// Writes a drawing whose positions are already known (`placed`, same order as `styled`'s boxes
/// and edges) with Graphviz's renderers, without laying anything out (engine nop2). Frames are
/// drawn first, under the boxes. Throws like renderWithGraphviz.
void renderPlaced(const LayoutRequest& styled, const LayoutResult& placed, const std::vector<PlacedFrame>& frames,
                  const std::string& format, const std::string& path);

/// The lock every Graphviz call in the process must hold (Graphviz keeps global state).
std::mutex& graphvizMutex();

// ---- pure helpers (unit-tested) -------------------------------------------------------------

/// Graphviz's y axis points up; ours points down. `top` is the bounding box's upper y (its ur.y).
inline Point flipY(Point p, double top) { return {p.x, top - p.y}; }

/// Converts one Graphviz Bézier (points in Graphviz coordinates, optional explicit end point when
/// the edge has an arrow head) to our y-down path.
EdgePath convertBezier(const std::vector<Point>& graphvizPoints, std::optional<Point> arrowEnd, double top);

/// Parses an edge `pos` attribute ("e,x,y s,x,y x1,y1 x2,y2 ...") into an y-down path.
/// Returns nullopt on malformed text (odd point counts, garbage numbers).
std::optional<EdgePath> parseEdgePos(std::string_view pos, double top);

/// Parses a `bb` attribute "llx,lly,urx,ury" into a y-down rectangle.
std::optional<Rect> parseBoundingBox(std::string_view bb);

/// Point halfway along the drawn path (pointAlongPath at 0.5).
Point pathMidpoint(const std::vector<Point>& points);

/// Smallest rectangle around every box and every path point.
Rect unionBounds(const std::vector<BoxPlacement>& boxes, const std::vector<EdgePath>& edges);

}  // namespace passlens::layout
