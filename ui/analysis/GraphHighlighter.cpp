#include "analysis/GraphHighlighter.h"

#include "graph/GraphView.h"

namespace passlens::ui {

GraphHighlighter::GraphHighlighter(GraphView* view, QObject* parent) : QObject(parent), view_(view) {
    // A new drawing keeps node styles by id; a highlight of the old graph must not leak into it.
    connect(view_, &GraphView::snapshotReplaced, this, &GraphHighlighter::clear);
}

void GraphHighlighter::show(const std::map<ir::NodeId, NodeStyle>& nodes,
                            const std::vector<std::pair<ir::NodeId, ir::NodeId>>& edges, const EdgeStyle& edgeStyle) {
    clear();
    for (const auto& [id, style] : nodes) {
        const NodeStyle* before = view_->nodeStyle(id);
        saved_[id] = before ? std::optional<NodeStyle>(*before) : std::nullopt;
        view_->setNodeStyle(id, style);
    }
    for (const auto& [from, to] : edges) view_->setEdgeStyle(from, to, edgeStyle);
    edges_ = edges;
}

void GraphHighlighter::clear() {
    for (const auto& [id, before] : saved_) {
        if (before) view_->setNodeStyle(id, *before);
        else view_->clearNodeStyle(id);
    }
    saved_.clear();
    for (const auto& [from, to] : edges_) view_->clearEdgeStyle(from, to);
    edges_.clear();
}

std::vector<ir::NodeId> GraphHighlighter::highlightedNodes() const {
    std::vector<ir::NodeId> out;
    for (const auto& [id, before] : saved_) out.push_back(id);
    return out;
}

}  // namespace passlens::ui
