#pragma once
// Drawing a large graph through its hierarchy (core/hierarchy): collapsed groups are one box each,
// expanded groups a frame around their own drawing. Every group's content is laid out on its own
// (so Graphviz never sees more than one group's boxes) and cached by (group, expansion state of
// its subtree): expanding a layer lays out that layer and its ancestors' few boxes, nothing else.
// Edges between groups are aggregated (count, tensor shape). Plain data, no Qt.
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "hierarchy/Hierarchy.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"

namespace passlens::layout {

using hierarchy::GroupId;
using Expansion = std::set<GroupId>;  ///< expanded groups (the root always is)

/// An expanded group's frame in the drawing.
struct GroupFrame {
    GroupId group = hierarchy::kNoGroup;
    Rect rect;             ///< the whole frame, label band included
    std::string label;     ///< "layer.3 · 77 ops"
    int depth = 0;
};

/// What the view shows: boxes (operators, inputs/outputs, constants and collapsed groups) and
/// edges as a display graph with its layout (same order), and the frames of expanded groups.
struct HierarchicalDrawing {
    DisplayGraph display;
    LayoutResult layout;
    std::vector<GroupFrame> frames;    ///< outermost first
    Expansion expanded;
    size_t groupLayouts = 0;           ///< group contents this layouter built for the drawing
    size_t cachedLayouts = 0;          ///< reused from this layouter's cache
    /// Of groupLayouts, those actually placed: a request seen before (by any layouter in the
    /// process, e.g. the same layer in the previous pass's graph) reuses that placement.
    size_t placements = 0;
    std::string fallbackReason;        ///< set when some group used the simple layered placement
};

/// Thrown by HierarchicalLayouter::draw when its cancel flag is raised.
struct LayoutCancelled : std::exception {
    const char* what() const noexcept override { return "layout cancelled"; }
};

/// The text of a collapsed group's box: title, subtitle, summary lines.
DisplayNode groupBox(const hierarchy::Hierarchy& h, GroupId g);

/// Groups at depth ≤ `depth` (0 = only the root: the top-level boxes).
Expansion expansionToDepth(const hierarchy::Hierarchy& h, int depth);
/// `expanded` plus every group on the way to `g`, and `g` itself.
Expansion withPathTo(const hierarchy::Hierarchy& h, Expansion expanded, GroupId g);
/// Boxes drawn for an expansion: each open group's own boxes and its frame, one per collapsed group.
size_t visibleBoxes(const hierarchy::Hierarchy& h, const DisplayGraph& dg, const Expansion& expanded);
/// The deepest level whose drawing stays within `budget` boxes (at least the top level).
Expansion expansionWithinBudget(const hierarchy::Hierarchy& h, const DisplayGraph& dg, size_t budget);

/// One rule for the app and `passlens-cli render`: drawings up to kWholeGraphBoxes boxes are one
/// Graphviz layout; above, they go through the hierarchy when it has something to show (name
/// scopes or repeated blocks, e.g. `encoder_layer_0 … 5 ×6 identical`); above kAlwaysGroupedBoxes
/// always (contiguous sections at least: one layout of thousands of boxes is slow and unreadable).
inline constexpr size_t kWholeGraphBoxes = 300;
inline constexpr size_t kAlwaysGroupedBoxes = 600;
/// Whether a display graph of `boxes` boxes is drawn through `h` (the rule above).
bool drawThroughHierarchy(size_t boxes, const hierarchy::Hierarchy& h);

/// The innermost group of each display box: operators by the hierarchy, inputs and outputs the
/// root, constant boxes the group of their (first) reader.
std::vector<GroupId> groupsOfBoxes(const hierarchy::Hierarchy& h, const DisplayGraph& dg);

/// Forgets the placements shared between layouters (benchmarks measure cold layouts with it).
void clearSharedLayoutCache();

class HierarchicalLayouter {
public:
    HierarchicalLayouter(std::shared_ptr<const hierarchy::Hierarchy> h, DisplayGraph full, BoxSizer sizer,
                         LayoutOptions options = {});

    /// Lays out what `expanded` shows (thread-safe; contents cached across calls). Throws
    /// LayoutCancelled when `cancel` is raised between two group layouts.
    HierarchicalDrawing draw(const Expansion& expanded, const std::atomic<bool>* cancel = nullptr);

    const hierarchy::Hierarchy& hierarchy() const { return *h_; }
    const DisplayGraph& full() const { return full_; }
    size_t cacheSize() const;

    static constexpr double kFramePadding = 14;
    static constexpr double kFrameLabelBand = 24;

private:
    struct UnitEdge {
        uint32_t from, to;     ///< unit keys: display keys, or group keys
        ir::ValueId value;
        std::string label;
        size_t count;
    };
    struct Content {           ///< one group's drawing in its own coordinates
        std::vector<uint32_t> units;   ///< box keys, same order as layout.boxes
        std::vector<UnitEdge> edges;   ///< same order as layout.edges
        LayoutResult layout;
    };
    using ContentPtr = std::shared_ptr<const Content>;

    ContentPtr contentOf(GroupId g, const Expansion& expanded, const std::vector<std::vector<UnitEdge>>& edgesByGroup,
                         const std::atomic<bool>* cancel, std::map<GroupId, ContentPtr>& contents,
                         HierarchicalDrawing& stats);
    std::vector<std::vector<UnitEdge>> unitEdges(const Expansion& expanded) const;
    void place(GroupId g, const Content& c, Point offset, const Expansion& expanded,
               const std::map<GroupId, ContentPtr>& contents, HierarchicalDrawing& out) const;

    std::shared_ptr<const hierarchy::Hierarchy> h_;
    DisplayGraph full_;
    BoxSizer sizer_;
    LayoutOptions options_;
    std::vector<GroupId> groupOfBox_;                       ///< by index into full_.nodes
    std::unordered_map<uint32_t, size_t> indexOfKey_;       ///< display key → index
    std::vector<std::vector<size_t>> boxesOfGroup_;         ///< direct display boxes of each group
    mutable std::mutex cacheMutex_;
    std::map<std::pair<GroupId, std::vector<GroupId>>, ContentPtr> cache_;
};

}  // namespace passlens::layout
