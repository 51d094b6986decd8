#include "layout/LayeredLayout.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <unordered_map>

#include "ir/Error.h"

namespace passlens::layout {

std::vector<int> longestPathLayers(size_t n, const std::vector<std::pair<size_t, size_t>>& edges) {
    // Kahn's order; a box left over (on a cycle) is released in input order with the edges from
    // boxes not yet placed ignored.
    std::vector<std::vector<size_t>> succ(n);
    std::vector<size_t> indegree(n, 0);
    for (auto [a, b] : edges) {
        if (a >= n || b >= n || a == b) continue;
        succ[a].push_back(b);
        ++indegree[b];
    }
    std::vector<int> layer(n, 0);
    std::vector<char> done(n, 0);
    std::vector<size_t> ready;
    for (size_t i = n; i-- > 0;)
        if (indegree[i] == 0) ready.push_back(i);
    size_t placed = 0, nextForced = 0;
    while (placed < n) {
        if (ready.empty()) {  // a cycle: force the first unplaced box
            while (done[nextForced]) ++nextForced;
            ready.push_back(nextForced);
            indegree[nextForced] = 0;
        }
        size_t v = ready.back();
        ready.pop_back();
        if (done[v]) continue;
        done[v] = 1;
        ++placed;
        for (size_t w : succ[v]) {
            if (done[w]) continue;
            layer[w] = std::max(layer[w], layer[v] + 1);
            if (--indegree[w] == 0) ready.push_back(w);
        }
    }
    return layer;
}

std::vector<std::vector<size_t>> orderLayers(const std::vector<int>& layers,
                                             const std::vector<std::pair<size_t, size_t>>& edges, int sweeps) {
    const size_t n = layers.size();
    int depth = 0;
    for (int l : layers) depth = std::max(depth, l + 1);
    std::vector<std::vector<size_t>> order(static_cast<size_t>(depth));
    for (size_t i = 0; i < n; ++i) order[size_t(layers[i])].push_back(i);
    std::vector<std::vector<size_t>> preds(n), succs(n);
    for (auto [a, b] : edges) {
        if (a >= n || b >= n || layers[a] >= layers[b]) continue;
        succs[a].push_back(b);
        preds[b].push_back(a);
    }
    // Positions are fractions of their layer's width, so layers of different sizes compare.
    std::vector<double> pos(n, 0);
    auto setPositions = [&](const std::vector<size_t>& row) {
        for (size_t k = 0; k < row.size(); ++k) pos[row[k]] = (k + 0.5) / double(row.size());
    };
    for (const auto& row : order) setPositions(row);
    for (int s = 0; s < sweeps; ++s) {
        const bool down = s % 2 == 0;
        for (int step = 1; step < depth; ++step) {
            auto& row = order[size_t(down ? step : depth - 1 - step)];
            std::vector<double> key(row.size());
            for (size_t k = 0; k < row.size(); ++k) {
                const auto& nb = down ? preds[row[k]] : succs[row[k]];
                if (nb.empty()) { key[k] = pos[row[k]]; continue; }
                double sum = 0;
                for (size_t m : nb) sum += pos[m];
                key[k] = sum / double(nb.size());
            }
            std::vector<size_t> idx(row.size());
            std::iota(idx.begin(), idx.end(), size_t(0));
            std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
            std::vector<size_t> sorted;
            sorted.reserve(row.size());
            for (size_t k : idx) sorted.push_back(row[k]);
            row = std::move(sorted);
            setPositions(row);
        }
    }
    return order;
}

LayoutResult layeredLayout(const LayoutRequest& req) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t n = req.boxes.size();
    std::unordered_map<uint32_t, size_t> index;
    index.reserve(n);
    for (size_t i = 0; i < n; ++i) index.emplace(req.boxes[i].key, i);
    std::vector<std::pair<size_t, size_t>> edges;
    edges.reserve(req.edges.size());
    for (const auto& e : req.edges) {
        auto a = index.find(e.from), b = index.find(e.to);
        if (a == index.end() || b == index.end())
            throw Error(ErrorKind::Internal, "layout: edge refers to an unknown box");
        edges.emplace_back(a->second, b->second);
    }
    const auto layers = longestPathLayers(n, edges);
    const auto order = orderLayers(layers, edges);
    const double rankGap = req.options.rankSeparation * 72.0, nodeGap = req.options.nodeSeparation * 72.0;

    LayoutResult r;
    r.boxes.resize(n);
    double y = 0;
    for (const auto& row : order) {
        double width = 0, height = 0;
        for (size_t i : row) {
            width += req.boxes[i].width;
            height = std::max(height, req.boxes[i].height);
        }
        width += nodeGap * double(row.size() > 0 ? row.size() - 1 : 0);
        double x = -width / 2;
        for (size_t i : row) {
            const auto& b = req.boxes[i];
            // Boxes of a layer share its vertical middle.
            r.boxes[i] = {b.key, Rect{x, y + (height - b.height) / 2, b.width, b.height}};
            x += b.width + nodeGap;
        }
        y += height + rankGap;
    }
    r.edges.reserve(req.edges.size());
    for (size_t k = 0; k < req.edges.size(); ++k) {
        const Rect& tail = r.boxes[edges[k].first].rect;
        const Rect& head = r.boxes[edges[k].second].rect;
        const Point from{tail.x + tail.width / 2, tail.bottom()};
        const Point tip{head.x + head.width / 2, head.y};
        const bool down = tip.y > from.y;
        const Point to{tip.x, down ? tip.y - 6 : tip.y};  // room for the arrow head
        EdgePath p;
        p.from = req.edges[k].from;
        p.to = req.edges[k].to;
        p.points = {from, {from.x + (to.x - from.x) / 3, from.y + (to.y - from.y) / 3},
                    {from.x + 2 * (to.x - from.x) / 3, from.y + 2 * (to.y - from.y) / 3}, to};
        if (down) p.arrowTip = tip;
        p.labelAnchor = pathMidpoint(p.points);
        r.edges.push_back(std::move(p));
    }
    // Shift so the drawing starts at the origin like Graphviz's.
    Rect bounds = unionBounds(r.boxes, r.edges);
    for (auto& b : r.boxes) { b.rect.x -= bounds.x; b.rect.y -= bounds.y; }
    for (auto& e : r.edges) {
        for (auto& pt : e.points) { pt.x -= bounds.x; pt.y -= bounds.y; }
        if (e.arrowTip) { e.arrowTip->x -= bounds.x; e.arrowTip->y -= bounds.y; }
        e.labelAnchor.x -= bounds.x;
        e.labelAnchor.y -= bounds.y;
    }
    r.bounds = {0, 0, bounds.width, bounds.height};
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

}  // namespace passlens::layout
