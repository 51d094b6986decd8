#include "analysis/BlockingEdge.h"

#include <algorithm>

namespace passlens::analysis {

std::vector<std::pair<ir::NodeId, ir::NodeId>> blockingEdges(const ir::Graph& g, ir::ValueId value,
                                                             ir::NodeId blockingNode, ir::NodeId node) {
    if (value == ir::kNone || !g.hasValue(value)) return {};
    const ir::Value& v = g.value(value);
    if (v.producer == ir::kNone) return {};
    auto reads = [&](ir::NodeId n) {
        return n != ir::kNone && std::find(v.consumers.begin(), v.consumers.end(), n) != v.consumers.end();
    };
    if (reads(blockingNode)) return {{v.producer, blockingNode}};
    if (reads(node)) return {{v.producer, node}};
    std::vector<std::pair<ir::NodeId, ir::NodeId>> out;
    for (ir::NodeId c : v.consumers)
        if (std::find(out.begin(), out.end(), std::pair{v.producer, c}) == out.end()) out.emplace_back(v.producer, c);
    return out;
}

}  // namespace passlens::analysis
