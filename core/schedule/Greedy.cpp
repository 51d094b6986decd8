// The heuristic orders: exporter, ONNX Runtime's reverse DFS, torch.compile's LPMF/BFS/DFS.
#include <algorithm>
#include <numeric>
#include <queue>

#include "schedule/Schedulers.h"

namespace passlens::schedule {

namespace {

/// Post-order DFS over predecessors: a node is emitted once all its inputs are.
std::vector<int> postOrder(const Problem& p, const std::vector<int>& roots, const std::vector<std::vector<int>>& predOrder) {
    std::vector<int> result;
    result.reserve(p.size());
    std::vector<char> seen(p.size(), 0);
    std::vector<std::pair<int, size_t>> stack;
    for (int r : roots) {
        if (seen[static_cast<size_t>(r)]) continue;
        seen[static_cast<size_t>(r)] = 1;
        stack.push_back({r, 0});
        while (!stack.empty()) {
            auto& [v, next] = stack.back();
            const auto& ps = predOrder[static_cast<size_t>(v)];
            if (next < ps.size()) {
                int q = ps[next++];
                if (!seen[static_cast<size_t>(q)]) {
                    seen[static_cast<size_t>(q)] = 1;
                    stack.push_back({q, 0});
                }
            } else {
                result.push_back(v);
                stack.pop_back();
            }
        }
    }
    return result;
}

}  // namespace

std::vector<int> exporterOrder(const Problem& p) {
    // Hand-built problems may list nodes in any order: fall back to the stable topological order.
    std::vector<int> order(p.size());
    std::iota(order.begin(), order.end(), 0);
    if (isTopological(p, order)) return order;
    order.clear();
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    std::vector<int> waiting(p.size());
    for (size_t v = 0; v < p.size(); ++v)
        if ((waiting[v] = static_cast<int>(p.preds[v].size())) == 0) ready.push(static_cast<int>(v));
    while (!ready.empty()) {
        int v = ready.top();
        ready.pop();
        order.push_back(v);
        for (int s : p.succs[static_cast<size_t>(v)])
            if (--waiting[static_cast<size_t>(s)] == 0) ready.push(s);
    }
    return order;
}

std::vector<int> reverseDfsOrder(const Problem& p) {
    // ONNX Runtime (Graph::ReverseDFSFrom from the leaf nodes): a stack seeded with the leaves, so
    // the last leaf is expanded first; inputs are visited lowest node index first.
    std::vector<int> roots;
    for (size_t v = p.size(); v-- > 0;)
        if (p.succs[v].empty()) roots.push_back(static_cast<int>(v));
    return postOrder(p, roots, p.preds);
}

std::vector<int> sizeDfsOrder(const Problem& p) {
    // torch.compile topological_sort_dfs: visit nodes (and each node's inputs) by ascending bytes
    // read + written, then node index.
    std::vector<int64_t> size(p.size(), 0);
    for (size_t v = 0; v < p.size(); ++v) {
        for (int t : p.outputs[v]) size[v] += p.tensors[static_cast<size_t>(t)].bytes;
        for (int t : p.inputs[v]) size[v] += p.tensors[static_cast<size_t>(t)].bytes;
    }
    auto bySize = [&](int a, int b) {
        return size[static_cast<size_t>(a)] != size[static_cast<size_t>(b)] ? size[static_cast<size_t>(a)] < size[static_cast<size_t>(b)] : a < b;
    };
    std::vector<int> roots(p.size());
    std::iota(roots.begin(), roots.end(), 0);
    std::sort(roots.begin(), roots.end(), bySize);
    auto preds = p.preds;
    for (auto& ps : preds) std::sort(ps.begin(), ps.end(), bySize);
    return postOrder(p, roots, preds);
}

std::vector<int> lpmfOrder(const Problem& p) {
    // torch.compile topological_sort_lpmf: among ready nodes pick the smallest
    // (max(bytes while it runs, peak so far), bytes it adds once done, node index).
    Simulator sim(p);
    std::vector<int> ready, order;
    order.reserve(p.size());
    for (size_t v = 0; v < p.size(); ++v)
        if (sim.waiting[v] == 0) ready.push_back(static_cast<int>(v));
    int64_t peak = 0;
    while (!ready.empty()) {
        size_t pick = 0;
        int64_t pickRun = 0, pickAdds = 0;
        for (size_t i = 0; i < ready.size(); ++i) {
            const int v = ready[i];
            const int64_t run = std::max(sim.stepBytes(v), peak), adds = sim.bytesAfter(v) - sim.live;
            if (i == 0 || run < pickRun || (run == pickRun && (adds < pickAdds || (adds == pickAdds && v < ready[pick])))) {
                pick = i;
                pickRun = run;
                pickAdds = adds;
            }
        }
        const int v = ready[pick];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
        peak = pickRun;
        sim.apply(v);
        order.push_back(v);
        for (int s : p.succs[static_cast<size_t>(v)])
            if (sim.waiting[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
    return order;
}

std::vector<int> bfsOrder(const Problem& p) {
    // torch.compile topological_sort_bfs: the ready node whose predecessors ran earliest (their
    // sorted execution positions compared lexicographically), then node index: FIFO, short lives.
    using Key = std::pair<std::vector<int>, int>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    std::vector<int> waiting(p.size()), position(p.size(), -1), order;
    order.reserve(p.size());
    for (size_t v = 0; v < p.size(); ++v)
        if ((waiting[v] = static_cast<int>(p.preds[v].size())) == 0) ready.push({{}, static_cast<int>(v)});
    while (!ready.empty()) {
        const int v = ready.top().second;
        ready.pop();
        position[static_cast<size_t>(v)] = static_cast<int>(order.size());
        order.push_back(v);
        for (int s : p.succs[static_cast<size_t>(v)]) {
            if (--waiting[static_cast<size_t>(s)] != 0) continue;
            std::vector<int> when;
            for (int q : p.preds[static_cast<size_t>(s)]) when.push_back(position[static_cast<size_t>(q)]);
            std::sort(when.begin(), when.end());
            ready.push({std::move(when), s});
        }
    }
    return order;
}

}  // namespace passlens::schedule
