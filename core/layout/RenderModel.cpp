#include "layout/RenderModel.h"

#include <algorithm>
#include <memory>

#include "hierarchy/Hierarchy.h"
#include "ir/Error.h"
#include "layout/DisplayGraph.h"
#include "layout/HierarchicalLayout.h"
#include "layout/Layout.h"

namespace passlens::layout {

namespace {

void applyNodeStyles(LayoutRequest& req, const RenderModelOptions& options) {
    if (options.nodeColors.empty()) return;
    for (auto& b : req.boxes) {
        if (!isOpKey(b.key)) continue;
        if (auto it = options.nodeColors.find(b.key); it != options.nodeColors.end()) {
            b.fillColor = it->second.first;
            b.borderColor = it->second.second;
        }
    }
}

}  // namespace

RenderModelResult renderModel(const ir::Model& model, const RenderModelOptions& options, const std::string& format,
                              const std::string& path) {
    DisplayOptions display;
    display.foldConstants = options.foldConstants;
    display.opset = model.opsetFor("") ? model.opsetFor("") : 17;
    auto dg = buildDisplayGraph(model.graph, display);
    RenderModelResult result;

    const bool steered = options.depth || !options.expand.empty() || options.expandAll;
    std::shared_ptr<hierarchy::Hierarchy> h;
    if (steered || dg.nodes.size() > kWholeGraphBoxes) h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(model.graph));
    if (!steered && !(h && drawThroughHierarchy(dg.nodes.size(), *h))) {
        auto req = toLayoutRequest(dg, nullptr, true);
        applyNodeStyles(req, options);
        renderWithGraphviz(req, format, path);
        result.boxes = dg.nodes.size();
        result.edges = dg.edges.size();
        return result;
    }
    Expansion expanded;
    if (options.expandAll) expanded = expansionToDepth(*h, 1 << 20);
    else if (options.depth) expanded = expansionToDepth(*h, std::clamp(*options.depth, 0, 1000));
    else if (options.expand.empty()) expanded = expansionWithinBudget(*h, dg, kDefaultBoxBudget);
    else expanded = expansionToDepth(*h, 0);
    for (const auto& p : options.expand) {
        auto g = h->findPath(p);
        if (!g) {
            std::string known;
            for (hierarchy::GroupId c : h->root().children) known += (known.empty() ? "" : ", ") + h->group(c).path;
            throw Error(ErrorKind::BadInput, "render --expand: no group '" + p + "' (top-level groups: " + known + ")");
        }
        expanded = withPathTo(*h, std::move(expanded), *g);
    }
    HierarchicalLayouter layouter(h, std::move(dg), nullptr);
    auto drawing = layouter.draw(expanded);
    std::vector<PlacedFrame> frames;
    for (const auto& f : drawing.frames) frames.push_back({groupKey(f.group), f.rect, f.label});
    auto req = toLayoutRequest(drawing.display, nullptr, true);
    applyNodeStyles(req, options);
    renderPlaced(req, drawing.layout, frames, format, path);
    result.hierarchical = true;
    result.boxes = drawing.display.nodes.size();
    result.edges = drawing.display.edges.size();
    result.openGroups = drawing.frames.size();
    result.groups = h->groups.size() - 1;
    result.groupedBy = std::string(hierarchy::sourceName(h->naming));
    result.fallbackReason = drawing.fallbackReason;
    return result;
}

}  // namespace passlens::layout
