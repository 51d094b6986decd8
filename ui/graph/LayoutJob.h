#pragma once
// Builds the display graph and lays it out off the GUI thread.
#include <QFont>
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

/// Font used for box text; box sizes are measured with it on the calling thread.
QFont nodeTitleFont();
QFont nodeTextFont();
/// Box sizes measured with those fonts (callable from any thread).
layout::BoxSizer nodeBoxSizer();

/// Lays out `graph` (owned by `model`); throws on error. Views run it through a LatestJob.
/// `keepOpen`: paths of groups open in the drawing this one replaces (a pass step of the same
/// model); those found in the new graph's hierarchy open again instead of the opening budget.
SnapshotPtr layoutNow(std::shared_ptr<const ir::Model> model, const ir::Graph* graph,
                      layout::DisplayOptions options, const std::vector<std::string>& keepOpen = {});

/// Paths of the open groups of a drawing (empty when it is not drawn through a hierarchy).
std::vector<std::string> openGroupPaths(const SnapshotPtr& snap);
/// The groups of `h` at `paths` and the way to them; nullopt when none of the paths exists.
std::optional<layout::Expansion> expansionOfPaths(const hierarchy::Hierarchy& h, const std::vector<std::string>& paths);

/// Whether a drawing is laid out whole or through its hierarchy is core's rule for app and CLI
/// (layout::drawThroughHierarchy); a grouped one opens as deep as kOpeningBoxBudget boxes allow.
inline constexpr size_t kOpeningBoxBudget = 60;

/// The same graph as `base` (drawn through its hierarchy) with other groups open; reuses the
/// layouter's cache. `cancel` abandons it between group layouts (layout::LayoutCancelled).
SnapshotPtr redrawWith(const SnapshotPtr& base, layout::Expansion expanded, const std::atomic<bool>* cancel = nullptr);

}  // namespace passlens::ui
