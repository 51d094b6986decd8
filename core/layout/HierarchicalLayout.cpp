#include "layout/HierarchicalLayout.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "plot/Scale.h"

namespace passlens::layout {

using hierarchy::Group;
using hierarchy::Hierarchy;
using hierarchy::kNoGroup;
using hierarchy::kRootGroup;

DisplayNode groupBox(const Hierarchy& h, GroupId g) {
    const Group& grp = h.group(g);
    DisplayNode dn;
    dn.key = groupKey(g);
    dn.kind = DisplayNode::Kind::Group;
    dn.group = g;
    dn.title = grp.name.empty() ? "graph" : grp.name;
    dn.subtitle = std::to_string(grp.opCount) + " ops";
    if (grp.parameterBytes) dn.subtitle += " · " + plot::formatBytes(double(grp.parameterBytes));
    std::string kinds;
    for (const auto& k : grp.dominantOps) kinds += (kinds.empty() ? "" : " · ") + k.op + " " + std::to_string(k.count);
    if (!kinds.empty()) dn.foldedLines.push_back(kinds);
    if (grp.identicalSiblings > 1) dn.foldedLines.push_back("×" + std::to_string(grp.identicalSiblings) + " identical");
    dn.category = grp.dominantOps.empty() ? OpCategory::Other : categorize(grp.dominantOps.front().op);
    return dn;
}

bool drawThroughHierarchy(size_t boxes, const Hierarchy& h) {
    if (boxes <= kWholeGraphBoxes) return false;
    if (boxes > kAlwaysGroupedBoxes) return true;
    return std::any_of(h.groups.begin(), h.groups.end(), [](const Group& g) {
        return g.source == hierarchy::GroupSource::Metadata || g.source == hierarchy::GroupSource::NodeNames ||
               g.source == hierarchy::GroupSource::RepeatedBlock;
    });
}

Expansion expansionToDepth(const Hierarchy& h, int depth) {
    Expansion e;
    for (const auto& g : h.groups)
        if (g.depth <= depth) e.insert(g.id);
    return e;
}

Expansion withPathTo(const Hierarchy& h, Expansion expanded, GroupId g) {
    for (GroupId x = g; x != kNoGroup; x = h.group(x).parent) expanded.insert(x);
    return expanded;
}

std::vector<GroupId> groupsOfBoxes(const Hierarchy& h, const DisplayGraph& dg) {
    std::vector<GroupId> out(dg.nodes.size(), kRootGroup);
    std::unordered_map<uint32_t, size_t> index;
    for (size_t i = 0; i < dg.nodes.size(); ++i) {
        index.emplace(dg.nodes[i].key, i);
        if (dg.nodes[i].kind == DisplayNode::Kind::Op) {
            GroupId g = h.groupOf(dg.nodes[i].node);
            out[i] = g == kNoGroup ? kRootGroup : g;
        }
    }
    // A constant box sits with its reader (each reader has its own copy when shared).
    std::vector<char> placed(dg.nodes.size(), 0);
    for (const auto& e : dg.edges) {
        auto from = index.find(e.from), to = index.find(e.to);
        if (from == index.end() || to == index.end()) continue;
        if (dg.nodes[from->second].kind != DisplayNode::Kind::Constant || placed[from->second]) continue;
        placed[from->second] = 1;
        out[from->second] = out[to->second];
    }
    return out;
}

size_t visibleBoxes(const Hierarchy& h, const DisplayGraph& dg, const Expansion& expanded) {
    std::vector<size_t> direct(h.groups.size(), 0);
    for (GroupId g : groupsOfBoxes(h, dg)) ++direct[g];
    size_t n = 0;
    for (const auto& g : h.groups) {
        // Only groups whose ancestors are all open are drawn at all.
        bool shown = true;
        for (GroupId p = g.parent; p != kNoGroup && shown; p = h.group(p).parent) shown = expanded.count(p) > 0;
        if (!shown) continue;
        // An open group costs its own boxes plus its frame (it takes room like a box).
        if (g.id == kRootGroup) n += direct[g.id];
        else if (expanded.count(g.id)) n += direct[g.id] + 1;
        else ++n;
    }
    return n;
}

Expansion expansionWithinBudget(const Hierarchy& h, const DisplayGraph& dg, size_t budget) {
    int maxDepth = 0;
    for (const auto& g : h.groups) maxDepth = std::max(maxDepth, g.depth);
    Expansion best = expansionToDepth(h, 0);
    for (int d = 1; d <= maxDepth; ++d) {
        Expansion e = expansionToDepth(h, d);
        if (visibleBoxes(h, dg, e) > budget) break;
        best = std::move(e);
    }
    return best;
}

namespace {

/// Layouts of group contents by request, shared by every layouter in the process: a pass that
/// changes one layer leaves the other layers' requests (ids, sizes, edges) as they were, so
/// stepping to it lays out only the changed groups and their ancestors.
class SharedContentCache {
public:
    static SharedContentCache& instance() {
        static SharedContentCache c;
        return c;
    }
    std::optional<LayoutResult> find(uint64_t h) {
        std::lock_guard lock(m_);
        auto it = map_.find(h);
        if (it == map_.end()) return std::nullopt;
        return it->second;
    }
    void clear() {
        std::lock_guard lock(m_);
        map_.clear();
    }
    void put(uint64_t h, const LayoutResult& r) {
        std::lock_guard lock(m_);
        if (map_.size() >= kMaxEntries) map_.clear();  // crude bound: a fresh start beats growing
        map_.emplace(h, r);
    }

private:
    static constexpr size_t kMaxEntries = 4096;
    std::mutex m_;
    std::unordered_map<uint64_t, LayoutResult> map_;
};

uint64_t requestHash(const LayoutRequest& req) {
    uint64_t h = 1469598103934665603ull;
    auto add = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    auto addDouble = [&](double d) { add(uint64_t(std::llround(d * 16))); };
    for (const auto& b : req.boxes) { add(b.key); addDouble(b.width); addDouble(b.height); }
    add(0xED6Eull);
    for (const auto& e : req.edges) { add(e.from); add(e.to); add(uint64_t(e.weight)); }
    return h;
}

}  // namespace

void clearSharedLayoutCache() { SharedContentCache::instance().clear(); }

HierarchicalLayouter::HierarchicalLayouter(std::shared_ptr<const Hierarchy> h, DisplayGraph full, BoxSizer sizer,
                                           LayoutOptions options)
    : h_(std::move(h)), full_(std::move(full)), sizer_(std::move(sizer)), options_(options) {
    groupOfBox_ = groupsOfBoxes(*h_, full_);
    boxesOfGroup_.resize(h_->groups.size());
    for (size_t i = 0; i < full_.nodes.size(); ++i) {
        indexOfKey_.emplace(full_.nodes[i].key, i);
        boxesOfGroup_[groupOfBox_[i]].push_back(i);
    }
    if (!sizer_) sizer_ = estimateBoxSize;
}

size_t HierarchicalLayouter::cacheSize() const {
    std::lock_guard lock(cacheMutex_);
    return cache_.size();
}

std::vector<std::vector<HierarchicalLayouter::UnitEdge>> HierarchicalLayouter::unitEdges(const Expansion& expanded) const {
    std::vector<std::vector<UnitEdge>> out(h_->groups.size());
    std::vector<std::map<std::pair<uint32_t, uint32_t>, size_t>> aggregated(h_->groups.size());
    auto pathOf = [&](size_t box, std::vector<GroupId>& path) {
        path.clear();
        for (GroupId g = groupOfBox_[box]; g != kNoGroup; g = h_->group(g).parent) path.push_back(g);
        std::reverse(path.begin(), path.end());  // root first
    };
    std::vector<GroupId> pa, pb;
    for (const auto& e : full_.edges) {
        auto ia = indexOfKey_.find(e.from), ib = indexOfKey_.find(e.to);
        if (ia == indexOfKey_.end() || ib == indexOfKey_.end()) continue;
        pathOf(ia->second, pa);
        pathOf(ib->second, pb);
        // The deepest open group holding both ends draws the edge, between its units on each side.
        size_t i = 1;
        GroupId owner = kRootGroup;
        while (i < pa.size() && i < pb.size() && pa[i] == pb[i] && expanded.count(pa[i])) owner = pa[i++];
        const uint32_t from = i < pa.size() ? groupKey(pa[i]) : e.from;
        const uint32_t to = i < pb.size() ? groupKey(pb[i]) : e.to;
        if (from == to) continue;  // inside one collapsed group
        if (isGroupKey(from) || isGroupKey(to)) {
            auto [it, fresh] = aggregated[owner].try_emplace({from, to}, out[owner].size());
            if (!fresh) { ++out[owner][it->second].count; continue; }
        }
        out[owner].push_back({from, to, e.value, e.label, 1});
    }
    return out;
}

HierarchicalLayouter::ContentPtr HierarchicalLayouter::contentOf(GroupId g, const Expansion& expanded,
                                                                 const std::vector<std::vector<UnitEdge>>& edgesByGroup,
                                                                 const std::atomic<bool>* cancel,
                                                                 std::map<GroupId, ContentPtr>& contents,
                                                                 HierarchicalDrawing& stats) {
    const Group& grp = h_->group(g);
    std::vector<GroupId> signature(expanded.upper_bound(g), expanded.lower_bound(grp.subtreeEnd));
    const auto key = std::make_pair(g, signature);
    for (GroupId c : grp.children)
        if (expanded.count(c)) contentOf(c, expanded, edgesByGroup, cancel, contents, stats);
    {
        std::lock_guard lock(cacheMutex_);
        if (auto it = cache_.find(key); it != cache_.end()) {
            ++stats.cachedLayouts;
            return contents[g] = it->second;
        }
    }
    if (cancel && cancel->load()) throw LayoutCancelled();
    auto content = std::make_shared<Content>();
    LayoutRequest req;
    req.options = options_;
    for (size_t i : boxesOfGroup_[g]) {
        auto [w, hgt] = sizer_(full_.nodes[i]);
        req.boxes.push_back({full_.nodes[i].key, w, hgt, {}, {}, {}});
    }
    for (GroupId c : grp.children) {
        double w, hgt;
        if (auto it = contents.find(c); it != contents.end()) {
            const Rect& b = it->second->layout.bounds;
            w = b.width + 2 * kFramePadding;
            hgt = b.height + 2 * kFramePadding + kFrameLabelBand;
        } else {
            std::tie(w, hgt) = sizer_(groupBox(*h_, c));
        }
        req.boxes.push_back({groupKey(c), w, hgt, {}, {}, {}});
    }
    for (const auto& b : req.boxes) content->units.push_back(b.key);
    content->edges = edgesByGroup[g];
    for (const auto& e : content->edges) req.edges.push_back({e.from, e.to, {}, 1});
    const uint64_t requestKey = requestHash(req);
    ++stats.groupLayouts;
    if (auto shared = SharedContentCache::instance().find(requestKey)) {
        content->layout = std::move(*shared);
    } else {
        content->layout = layoutOrFallBack(req);
        SharedContentCache::instance().put(requestKey, content->layout);
        ++stats.placements;
        stats.layout.seconds += content->layout.seconds;
    }
    if (!content->layout.fallbackReason.empty()) stats.fallbackReason = content->layout.fallbackReason;
    std::lock_guard lock(cacheMutex_);
    return contents[g] = cache_.emplace(key, std::move(content)).first->second;
}


namespace {

EdgePath shifted(EdgePath p, Point d) {
    for (auto& pt : p.points) { pt.x += d.x; pt.y += d.y; }
    if (p.arrowTip) { p.arrowTip->x += d.x; p.arrowTip->y += d.y; }
    p.labelAnchor.x += d.x;
    p.labelAnchor.y += d.y;
    return p;
}

}  // namespace

void HierarchicalLayouter::place(GroupId g, const Content& c, Point offset, const Expansion& expanded,
                                 const std::map<GroupId, ContentPtr>& contents, HierarchicalDrawing& out) const {
    for (size_t i = 0; i < c.units.size(); ++i) {
        const uint32_t key = c.units[i];
        Rect r = c.layout.boxes[i].rect;
        r.x += offset.x;
        r.y += offset.y;
        if (isGroupKey(key) && expanded.count(groupOfKey(key))) {
            const GroupId child = groupOfKey(key);
            const Group& grp = h_->group(child);
            out.frames.push_back({child, r, grp.name + " · " + std::to_string(grp.opCount) + " ops", grp.depth});
            const Content& inner = *contents.at(child);
            const Rect& b = inner.layout.bounds;
            place(child, inner, {r.x + kFramePadding - b.x, r.y + kFrameLabelBand + kFramePadding - b.y}, expanded,
                  contents, out);
            continue;
        }
        out.display.nodes.push_back(isGroupKey(key) ? groupBox(*h_, groupOfKey(key)) : full_.nodes[indexOfKey_.at(key)]);
        if (out.display.nodes.back().kind == DisplayNode::Kind::Op) ++out.display.opBoxCount;
        out.layout.boxes.push_back({key, r});
    }
    for (size_t i = 0; i < c.edges.size(); ++i) {
        const UnitEdge& e = c.edges[i];
        std::string label = e.count > 1 ? "×" + std::to_string(e.count) + (e.label.empty() ? "" : " · " + e.label) : e.label;
        out.display.edges.push_back({e.from, e.to, e.value, std::move(label)});
        out.layout.edges.push_back(shifted(c.layout.edges[i], offset));
    }
    (void)g;
}

HierarchicalDrawing HierarchicalLayouter::draw(const Expansion& requested, const std::atomic<bool>* cancel) {
    HierarchicalDrawing out;
    // Only groups whose ancestors are all open count; the root always is.
    out.expanded.insert(kRootGroup);
    for (GroupId g : requested) {
        if (g >= h_->groups.size()) continue;
        bool reachable = true;
        for (GroupId p = h_->group(g).parent; p != kNoGroup && reachable; p = h_->group(p).parent)
            reachable = requested.count(p) || p == kRootGroup;
        if (reachable) out.expanded.insert(g);
    }
    const auto edges = unitEdges(out.expanded);
    std::map<GroupId, ContentPtr> contents;
    contentOf(kRootGroup, out.expanded, edges, cancel, contents, out);
    place(kRootGroup, *contents.at(kRootGroup), {0, 0}, out.expanded, contents, out);
    out.display.foldedConstantNodes = full_.foldedConstantNodes;
    std::vector<BoxPlacement> frameBoxes;
    for (const auto& f : out.frames) frameBoxes.push_back({groupKey(f.group), f.rect});
    frameBoxes.insert(frameBoxes.end(), out.layout.boxes.begin(), out.layout.boxes.end());
    out.layout.bounds = unionBounds(frameBoxes, out.layout.edges);
    out.layout.fallbackReason = out.fallbackReason;
    return out;
}

}  // namespace passlens::layout
