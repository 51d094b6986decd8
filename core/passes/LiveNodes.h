#pragma once
// Which nodes still matter while a sweep leaves dead code behind (dce runs after the pass), and
// which nodes a rewrite frees: shared by the rules that weigh nodes freed against nodes added.
#include <cstddef>
#include <vector>

#include "passes/Rewriter.h"

namespace passlens::passes {

/// Which nodes reach a graph output (through inputs and subgraph captures), by node id: the
/// exporter's Shape chains still read intermediate values, and dce removes them only later. Nodes
/// made after this was computed (ids past its end) count as live.
class Liveness {
public:
    explicit Liveness(const ir::Graph& g);
    bool live(ir::NodeId n) const { return n >= live_.size() || live_[n]; }

private:
    std::vector<char> live_;
};

/// Nodes that only exist to compute the tops' outputs, dead readers aside: the tops, then back
/// through producers whose every live reader is already counted.
size_t exclusiveNodes(const Rewriter& rw, const Liveness& live, const std::vector<ir::NodeId>& tops, bool captures);

}  // namespace passlens::passes
