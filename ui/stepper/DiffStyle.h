#pragma once
// What the graph view paints for a pass step: every node of the main graph is unchanged, added,
// changed or removed relative to the previous snapshot (matched by stable NodeId). The state
// computation is plain data (no Qt), tested without a GUI; styleFor() maps a state to colors.
#include <string>
#include <vector>

#include "graph/GraphSnapshot.h"
#include "ir/Graph.h"
#include "passes/ChangeLog.h"

namespace passlens::ui {

enum class DiffState { Unchanged, Added, Changed, Removed };

struct StepDiff {
    std::vector<ir::NodeId> added;    ///< in the after graph only (sorted)
    std::vector<ir::NodeId> changed;  ///< in both, different op/inputs/outputs/attributes (sorted)
    std::vector<ir::NodeId> removed;  ///< in the before graph only (sorted)

    DiffState stateOf(ir::NodeId id) const;
    /// added ∪ changed ∪ removed, sorted: every node the view marks.
    std::vector<ir::NodeId> marked() const;
    bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};

/// Diff of two snapshots of one graph (usually the main graphs of consecutive pipeline steps).
StepDiff computeStepDiff(const ir::Graph& before, const ir::Graph& after);

/// Node ids a pass's change log names for one graph (`graphPath` "" = main graph), sorted,
/// restricted to nodes that exist before or after the pass (a node made and dropped within the
/// pass is invisible in a diff). Both the change's nodes and the nodes it touched count.
std::vector<ir::NodeId> nodesNamedByChanges(const std::vector<passes::Change>& changes, const ir::Graph& before,
                                            const ir::Graph& after, const std::string& graphPath = {});

/// "came from" for a fused/folded node: display names of its original nodes, looked up in the
/// graph before the first pass (ids stay stable, so the original graph still holds them).
std::vector<std::string> provenanceNames(const ir::Node& node, const ir::Graph& original);

/// How the graph view marks a diff state. Never by fill (fills are the op categories): a thick
/// ring around the box, green for added, orange and hatched for changed; a removed node is a grey
/// ghost in a dashed red ring, cross-hatched. Unchanged boxes are desaturated (GraphView::setDiffMode).
NodeStyle styleFor(DiffState state);
/// The state's marker color (ring, badge, legend swatch); invalid for Unchanged.
QColor diffColor(DiffState state);
/// A light tint of it for table rows and text panels.
QColor diffTint(DiffState state);

}  // namespace passlens::ui
