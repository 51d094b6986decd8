#pragma once
// One temporary highlight on a graph view (the dominator path, the nodes and edge that blocked a
// fusion): node and edge styles that replace each other and give back whatever style a node had
// before (e.g. a diff color). Graph logic stays with the callers; this only decorates.
#include <QObject>
#include <map>
#include <optional>
#include <vector>

#include "graph/GraphSnapshot.h"

namespace passlens::ui {

class GraphView;

class GraphHighlighter : public QObject {
    Q_OBJECT
public:
    explicit GraphHighlighter(GraphView* view, QObject* parent = nullptr);

    /// Replaces the current highlight.
    void show(const std::map<ir::NodeId, NodeStyle>& nodes,
              const std::vector<std::pair<ir::NodeId, ir::NodeId>>& edges = {}, const EdgeStyle& edgeStyle = {});
    void clear();
    /// Nodes highlighted now, ascending.
    std::vector<ir::NodeId> highlightedNodes() const;
    const std::vector<std::pair<ir::NodeId, ir::NodeId>>& highlightedEdges() const { return edges_; }

private:
    GraphView* view_;
    std::map<ir::NodeId, std::optional<NodeStyle>> saved_;  ///< style before the highlight
    std::vector<std::pair<ir::NodeId, ir::NodeId>> edges_;
};

}  // namespace passlens::ui
