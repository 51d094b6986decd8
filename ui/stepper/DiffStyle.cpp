#include "stepper/DiffStyle.h"

#include <algorithm>
#include <iterator>

#include "passes/Diff.h"

namespace passlens::ui {

namespace {
bool contains(const std::vector<ir::NodeId>& sorted, ir::NodeId id) {
    return std::binary_search(sorted.begin(), sorted.end(), id);
}
}  // namespace

DiffState StepDiff::stateOf(ir::NodeId id) const {
    if (contains(added, id)) return DiffState::Added;
    if (contains(changed, id)) return DiffState::Changed;
    if (contains(removed, id)) return DiffState::Removed;
    return DiffState::Unchanged;
}

std::vector<ir::NodeId> StepDiff::marked() const {
    std::vector<ir::NodeId> out;
    out.reserve(added.size() + changed.size() + removed.size());
    out.insert(out.end(), added.begin(), added.end());
    out.insert(out.end(), changed.begin(), changed.end());
    out.insert(out.end(), removed.begin(), removed.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

StepDiff computeStepDiff(const ir::Graph& before, const ir::Graph& after) {
    passes::GraphDiff d = passes::diffGraphs(before, after);
    StepDiff s;
    s.added = std::move(d.addedNodes);
    s.changed = std::move(d.changedNodes);
    s.removed = std::move(d.removedNodes);
    for (auto* v : {&s.added, &s.changed, &s.removed}) std::sort(v->begin(), v->end());
    return s;
}

std::vector<ir::NodeId> nodesNamedByChanges(const std::vector<passes::Change>& changes, const ir::Graph& before,
                                            const ir::Graph& after, const std::string& graphPath) {
    std::vector<ir::NodeId> out;
    for (const auto& c : changes) {
        if (c.graphPath != graphPath) continue;
        for (const auto* ids : {&c.nodes, &c.touched})
            for (ir::NodeId n : *ids)
                if (before.hasNode(n) || after.hasNode(n)) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<std::string> provenanceNames(const ir::Node& node, const ir::Graph& original) {
    std::vector<std::string> out;
    for (ir::NodeId o : node.provenance)
        out.push_back(original.hasNode(o) ? original.node(o).displayName() : "#" + std::to_string(o));
    return out;
}

QColor diffColor(DiffState state) {
    switch (state) {
    case DiffState::Added: return QColor("#1a7f37");
    case DiffState::Changed: return QColor("#d4570b");
    case DiffState::Removed: return QColor("#cf222e");
    case DiffState::Unchanged: break;
    }
    return {};
}

QColor diffTint(DiffState state) {
    switch (state) {
    case DiffState::Added: return QColor("#d6f5dc");
    case DiffState::Changed: return QColor("#fde2cf");
    case DiffState::Removed: return QColor("#ffd7d5");
    case DiffState::Unchanged: break;
    }
    return {};
}

NodeStyle styleFor(DiffState state) {
    NodeStyle s;
    s.outline = diffColor(state);
    switch (state) {
    case DiffState::Unchanged: break;
    case DiffState::Added: s.badge = "new"; break;
    case DiffState::Changed:
        s.hatched = true;
        s.badge = "changed";
        break;
    case DiffState::Removed:
        s.fill = QColor("#eeeeee");
        s.border = QColor("#9a9a9a");
        s.opacity = 0.75;
        s.dashed = true;
        s.hatched = true;
        s.badge = "removed";
        break;
    }
    return s;
}

}  // namespace passlens::ui
