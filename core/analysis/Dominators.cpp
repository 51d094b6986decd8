#include "analysis/Dominators.h"

#include <algorithm>

#include "ir/Error.h"

namespace passlens::analysis {

std::vector<uint32_t> computeImmediateDominators(const std::vector<std::vector<uint32_t>>& preds) {
    const uint32_t undef = UINT32_MAX;
    std::vector<uint32_t> idom(preds.size(), undef);
    if (preds.empty()) return idom;
    idom[0] = 0;
    auto intersect = [&](uint32_t a, uint32_t b) {
        // Vertex numbers are topological, so the larger one walks up first.
        while (a != b) {
            while (a > b) a = idom[a];
            while (b > a) b = idom[b];
        }
        return a;
    };
    // On a DAG in topological order one sweep reaches the fixpoint: every predecessor is final.
    for (uint32_t v = 1; v < preds.size(); ++v) {
        uint32_t d = undef;
        for (uint32_t p : preds[v]) {
            if (idom[p] == undef) continue;  // unreachable predecessor
            d = d == undef ? p : intersect(d, p);
        }
        idom[v] = d;
    }
    return idom;
}

DominatorTree DominatorTree::build(const ir::Graph& g, bool post) {
    DominatorTree t;
    t.post_ = post;
    auto topo = g.topologicalOrder();
    if (!topo) throw Error(ErrorKind::BadInput, "dominator tree: the graph has a cycle");
    t.nodes_ = *topo;
    if (post) std::reverse(t.nodes_.begin(), t.nodes_.end());
    ir::NodeId maxId = 0;
    for (auto n : t.nodes_) maxId = std::max(maxId, n + 1);
    t.indexOf_.assign(maxId, UINT32_MAX);
    for (uint32_t i = 0; i < t.nodes_.size(); ++i) t.indexOf_[t.nodes_[i]] = i + 1;

    std::vector<std::vector<uint32_t>> preds(t.nodes_.size() + 1);
    for (uint32_t i = 0; i < t.nodes_.size(); ++i) {
        ir::NodeId n = t.nodes_[i];
        auto& ps = preds[i + 1];
        if (!post) {
            for (ir::ValueId v : g.readsOf(n)) {
                if (v == ir::kNone) continue;
                // Weights are not dataflow from the inputs: counting them as edges from the entry
                // would leave every Conv/MatMul dominated by the entry alone.
                if (g.value(v).isConstant()) continue;
                ir::NodeId p = g.value(v).producer;
                ps.push_back(p == ir::kNone ? 0 : t.indexOf_[p]);
            }
        } else {
            for (ir::ValueId v : g.node(n).outputs) {
                if (v == ir::kNone) continue;
                const auto& val = g.value(v);
                if (val.isGraphOutput) ps.push_back(0);
                for (ir::NodeId c : val.consumers) ps.push_back(t.indexOf_[c]);
            }
        }
        // Sources (sinks for post) hang off the virtual root.
        if (ps.empty()) ps.push_back(0);
        std::sort(ps.begin(), ps.end());
        ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    }
    t.idom_ = computeImmediateDominators(preds);
    t.depth_.assign(t.idom_.size(), 0);
    for (uint32_t v = 1; v < t.idom_.size(); ++v) t.depth_[v] = t.depth_[t.idom_[v]] + 1;
    return t;
}

uint32_t DominatorTree::index(ir::NodeId n) const {
    if (n == ir::kNone) return 0;
    if (n >= indexOf_.size() || indexOf_[n] == UINT32_MAX)
        throw Error(ErrorKind::BadInput, "dominator tree: unknown node id " + std::to_string(n));
    return indexOf_[n];
}

ir::NodeId DominatorTree::idom(ir::NodeId n) const { return nodeAt(idom_[index(n)]); }

ir::NodeId DominatorTree::lca(ir::NodeId a, ir::NodeId b) const {
    uint32_t x = index(a), y = index(b);
    while (depth_[x] > depth_[y]) x = idom_[x];
    while (depth_[y] > depth_[x]) y = idom_[y];
    while (x != y) { x = idom_[x]; y = idom_[y]; }
    return nodeAt(x);
}

bool DominatorTree::dominates(ir::NodeId a, ir::NodeId b) const { return lca(a, b) == a; }

std::vector<ir::NodeId> DominatorTree::children(ir::NodeId n) const {
    uint32_t p = index(n);
    std::vector<ir::NodeId> out;
    for (uint32_t v = 1; v < idom_.size(); ++v)
        if (idom_[v] == p) out.push_back(nodeAt(v));
    return out;
}

}  // namespace passlens::analysis
