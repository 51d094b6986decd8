#pragma once
// A model's graph drawn headless with the app's layout and colors, written by Graphviz's renderers
// (svg, png, dot): `passlens-cli render` and the Python module's inline drawings. Whether a graph
// is one Graphviz layout or drawn through its hierarchy (core/hierarchy, collapsed groups are one
// box) is the app's rule, drawThroughHierarchy (layout/HierarchicalLayout.h), unless steered by depth/expand.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "layout/HierarchicalLayout.h"

namespace passlens::layout {

/// The default depth shows as many hierarchy levels as fit in this many boxes.
inline constexpr size_t kDefaultBoxBudget = 60;

struct RenderModelOptions {
    bool foldConstants = true;
    std::optional<int> depth;           ///< open this many hierarchy levels
    std::vector<std::string> expand;    ///< open these groups ("encoder/layer.3")
    bool expandAll = false;
    /// Fill and border colors ("#rrggbb") for operator boxes, by node id (diff colors); boxes not
    /// listed keep their category colors.
    std::map<ir::NodeId, std::pair<std::string, std::string>> nodeColors;
};

struct RenderModelResult {
    size_t boxes = 0, edges = 0;
    bool hierarchical = false;
    size_t openGroups = 0, groups = 0;  ///< hierarchical only
    std::string groupedBy;              ///< hierarchical only: "name scopes", "repeated blocks", ...
    std::string fallbackReason;         ///< the simple layered placement stood in for Graphviz
};

/// Draws the main graph of `model` into `path` in `format` ("svg", "png", "dot"). Throws
/// Error(BadInput) naming the top-level groups for an unknown expand path.
RenderModelResult renderModel(const ir::Model& model, const RenderModelOptions& options, const std::string& format,
                              const std::string& path);

}  // namespace passlens::layout
