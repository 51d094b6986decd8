#pragma once
// An immutable, laid-out picture of one graph: what the layout worker hands to the view.
#include <QColor>
#include <memory>

#include "ir/Model.h"
#include "layout/DisplayGraph.h"
#include "layout/HierarchicalLayout.h"
#include "layout/Layout.h"

namespace passlens::ui {

struct GraphSnapshot {
    std::shared_ptr<const ir::Model> model;  ///< keeps `graph` alive
    const ir::Graph* graph = nullptr;        ///< the main graph or a subgraph of `model`
    layout::DisplayGraph display;
    layout::LayoutResult layout;             ///< boxes/edges in the same order as `display`
    /// Large graphs: the hierarchy, its layouter (with the per-group cache, shared by every drawing
    /// of this graph), the open groups and their frames. Null/empty for a graph drawn whole.
    std::shared_ptr<layout::HierarchicalLayouter> layouter;
    layout::Expansion expanded;
    std::vector<layout::GroupFrame> frames;
    double groupingSeconds = 0;              ///< display graph + hierarchy
    double layoutSeconds = 0;                ///< this drawing's layout (cached groups cost nothing)
    /// Group contents this drawing placed anew (not from any layouter's cache): what stepping to
    /// a pass that changed one layer costs.
    size_t groupsPlaced = 0;
    const hierarchy::Hierarchy* hierarchy() const { return layouter ? &layouter->hierarchy() : nullptr; }
};
using SnapshotPtr = std::shared_ptr<const GraphSnapshot>;

/// Per-node decoration set from outside (diff states, highlights). Invalid colors keep the default.
struct NodeStyle {
    QColor fill, border;
    qreal opacity = 1.0;       ///< e.g. a removed node drawn as a ghost
    bool dashed = false;
    QString badge;             ///< short text drawn at the box's top-right corner
    /// A thick ring around the box (diff states): the fill keeps the op category's color, so a
    /// diff state never reads as a category. Also the badge's color when valid.
    QColor outline;
    bool hatched = false;      ///< diagonal hatching over the fill (a changed node)
};

/// A highlight that recolors the box (analysis views: a path, the node asked about, a blocker).
inline NodeStyle highlightStyle(const QColor& fill, const QColor& border, const QString& badge = {}) {
    NodeStyle s;
    s.fill = fill;
    s.border = border;
    s.badge = badge;
    return s;
}

/// Per-edge decoration set from outside (e.g. the edge that blocked a fusion).
struct EdgeStyle {
    QColor color;
    qreal width = 2.6;
    bool dashed = false;
};

/// A group of nodes framed together in the view (fusion groups), its anchor tagged.
struct NodeCluster {
    QString label;
    std::vector<ir::NodeId> members;
    ir::NodeId anchor = ir::kNone;
    QColor color;              ///< invalid: picked from a palette by position
};

}  // namespace passlens::ui
