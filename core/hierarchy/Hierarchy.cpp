#include "hierarchy/Hierarchy.h"

#include <algorithm>
#include <unordered_set>

namespace passlens::hierarchy {

using ir::NodeId;

std::string_view sourceName(GroupSource s) {
    switch (s) {
        case GroupSource::Root: return "root";
        case GroupSource::Metadata: return "name_scopes metadata";
        case GroupSource::NodeNames: return "node names";
        case GroupSource::RepeatedBlock: return "repeated blocks";
        case GroupSource::Section: return "sections";
        case GroupSource::Range: return "range";
    }
    return "?";
}

GroupId Hierarchy::groupOf(NodeId n) const {
    auto it = groupOfNode.find(n);
    return it == groupOfNode.end() ? kNoGroup : it->second;
}

std::vector<GroupId> Hierarchy::pathTo(NodeId n) const {
    std::vector<GroupId> path;
    for (GroupId g = groupOf(n); g != kNoGroup && g != kRootGroup; g = groups[g].parent) path.push_back(g);
    std::reverse(path.begin(), path.end());
    return path;
}

std::optional<GroupId> Hierarchy::findPath(std::string_view path) const {
    for (const auto& g : groups)
        if (g.id != kRootGroup && g.path == path) return g.id;
    return std::nullopt;
}

std::vector<NodeId> Hierarchy::membersOf(GroupId id) const {
    std::vector<NodeId> out;
    for (GroupId g = id; g < groups[id].subtreeEnd; ++g)
        out.insert(out.end(), groups[g].nodes.begin(), groups[g].nodes.end());
    return out;
}

namespace {

/// Ops that only move or describe data (shape arithmetic, layout, casts): a group summary ranks
/// them after the ops that compute, so "features.1" reads "Conv 52 · Add 16", not "Shape 86 · Unsqueeze 74".
bool isPlumbing(const std::string& op) {
    static const std::unordered_set<std::string> plumbing = {
        "Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Reshape", "Concat", "Slice", "Transpose", "Cast",
        "Identity", "ConstantOfShape", "Range", "Expand", "Flatten", "Split", "CastLike"};
    return plumbing.count(op) > 0;
}

/// The `keep` most telling op types: computing ops before plumbing, then by count.
std::vector<OpKindCount> rankOps(const std::unordered_map<std::string, size_t>& ops, size_t keep) {
    std::vector<OpKindCount> sorted;
    for (const auto& [op, count] : ops) sorted.push_back({op, count});
    std::sort(sorted.begin(), sorted.end(), [](const OpKindCount& a, const OpKindCount& b) {
        const bool pa = isPlumbing(a.op), pb = isPlumbing(b.op);
        if (pa != pb) return !pa;
        return a.count != b.count ? a.count > b.count : a.op < b.op;
    });
    if (sorted.size() > keep) sorted.resize(keep);
    return sorted;
}

struct Draft {
    std::string name;
    GroupSource source = GroupSource::Root;
    std::vector<size_t> children;
    std::vector<NodeId> nodes;
    std::unordered_map<std::string, size_t> childByName;  // scope trie only
};

class Builder {
public:
    Builder(const ir::Graph& g, const HierarchyOptions& o) : g_(g), opt_(o) {
        const auto& order = g.nodeOrder();
        for (size_t i = 0; i < order.size(); ++i) pos_[order[i]] = i;
        drafts_.emplace_back();
    }

    Hierarchy build() {
        Hierarchy h;
        h.naming = scopeTree();
        compressChains(0);
        for (size_t d = 0; d < drafts_.size(); ++d) splitDirect(d);  // appends; index loop on purpose
        for (size_t d = 0; d < drafts_.size(); ++d) nestRanges(d);
        if (h.naming == GroupSource::Root && drafts_.size() > 1) {  // flat names: how they were split
            const bool repeats = std::any_of(drafts_.begin(), drafts_.end(),
                                             [](const Draft& d) { return d.source == GroupSource::RepeatedBlock; });
            h.naming = repeats ? GroupSource::RepeatedBlock : GroupSource::Section;
        }
        emit(h);
        summarize(h);
        return h;
    }

private:
    std::vector<std::string> scopesOf(const ir::Node& n, GroupSource naming) const {
        if (naming == GroupSource::Metadata) {
            for (const auto& kv : n.metadataProps)
                if (kv.key == kNameScopesKey) return parseNameScopes(kv.value);
            return {};
        }
        if (naming == GroupSource::NodeNames) return scopesFromNodeName(n.name);
        return {};
    }

    /// Builds the trie of scope paths; returns the naming used (Root when names are flat).
    GroupSource scopeTree() {
        size_t withMetadata = 0, withSlash = 0;
        for (NodeId id : g_.nodeOrder()) {
            const ir::Node& n = g_.node(id);
            for (const auto& kv : n.metadataProps) withMetadata += kv.key == kNameScopesKey;
            withSlash += !scopesFromNodeName(n.name).empty();
        }
        const size_t total = g_.nodeOrder().size();
        GroupSource naming = GroupSource::Root;
        if (withMetadata > 0) naming = GroupSource::Metadata;
        else if (withSlash * 10 >= total * 3) naming = GroupSource::NodeNames;  // at least 30%
        for (NodeId id : g_.nodeOrder()) {
            size_t d = 0;
            for (auto& scope : scopesOf(g_.node(id), naming)) {
                auto it = drafts_[d].childByName.find(scope);
                if (it == drafts_[d].childByName.end()) {
                    Draft child;
                    child.name = scope;
                    child.source = naming;
                    drafts_.push_back(std::move(child));
                    it = drafts_[d].childByName.emplace(scope, drafts_.size() - 1).first;
                    drafts_[d].children.push_back(drafts_.size() - 1);
                }
                d = it->second;
            }
            drafts_[d].nodes.push_back(id);
        }
        return naming;
    }

    /// A group holding nothing but one child group becomes that child ("attention/self").
    void compressChains(size_t d) {
        for (size_t c : drafts_[d].children) {
            while (drafts_[c].nodes.empty() && drafts_[c].children.size() == 1) {
                size_t only = drafts_[c].children.front();
                drafts_[c].name += "/" + drafts_[only].name;
                drafts_[c].nodes = std::move(drafts_[only].nodes);
                drafts_[c].children = std::move(drafts_[only].children);
            }
            compressChains(c);
        }
    }

    uint32_t tokenOf(const ir::Node& n) {
        auto [it, fresh] = tokens_.try_emplace(n.domain + "\x1f" + n.opType, uint32_t(tokens_.size()));
        return it->second;
    }

    /// Price of a block boundary before each position: values produced before it and read after.
    std::vector<uint32_t> liveAcross(const std::vector<NodeId>& seq) const {
        std::unordered_map<NodeId, size_t> local;
        for (size_t i = 0; i < seq.size(); ++i) local.emplace(seq[i], i);
        std::vector<size_t> lastRead(seq.size(), 0);
        for (size_t i = 0; i < seq.size(); ++i)
            for (ir::ValueId v : g_.node(seq[i]).inputs) {
                if (v == ir::kNone) continue;
                auto it = local.find(g_.value(v).producer);
                if (it != local.end()) lastRead[it->second] = std::max(lastRead[it->second], i);
            }
        std::vector<int64_t> diff(seq.size() + 2, 0);
        for (size_t a = 0; a < seq.size(); ++a)
            if (lastRead[a] > a) { ++diff[a + 1]; --diff[lastRead[a] + 1]; }
        std::vector<uint32_t> cost(seq.size() + 1, 0);
        int64_t run = 0;
        for (size_t i = 0; i <= seq.size(); ++i) cost[i] = uint32_t(run += diff[i]);
        return cost;
    }

    size_t addDraft(size_t parent, std::string name, GroupSource source, std::vector<NodeId> nodes) {
        Draft d;
        d.name = std::move(name);
        d.source = source;
        d.nodes = std::move(nodes);
        drafts_.push_back(std::move(d));
        drafts_[parent].children.push_back(drafts_.size() - 1);
        return drafts_.size() - 1;
    }

    /// A range group is named by what it computes ("MatMul, Softmax 24–80"), its node positions
    /// keeping sibling names apart; a range of shape plumbing only by its most frequent ops.
    std::string spanName(const std::vector<NodeId>& nodes) const {
        std::unordered_map<std::string, size_t> ops;
        for (NodeId id : nodes)
            if (!(g_.node(id).opType == "Constant" && g_.node(id).domain.empty())) ++ops[g_.node(id).opType];
        const auto ranked = rankOps(ops, 2);
        std::string kinds;
        for (const auto& k : ranked) kinds += (kinds.empty() ? "" : ", ") + k.op;
        return (kinds.empty() ? std::string("nodes") : kinds) + " " + std::to_string(pos_.at(nodes.front())) + "–" +
               std::to_string(pos_.at(nodes.back()));
    }

    static bool allConstants(const ir::Graph& g, const std::vector<NodeId>& nodes) {
        return std::all_of(nodes.begin(), nodes.end(), [&](NodeId id) { return g.node(id).opType == "Constant" && g.node(id).domain.empty(); });
    }

    /// Text before/after repeated blocks: direct members when short, else its own group.
    void addPiece(size_t parent, std::vector<NodeId> piece) {
        if (piece.empty()) return;
        // Constants only: no ops to show (they fold into their readers), so no group of their own.
        if (piece.size() <= opt_.keepDirect || allConstants(g_, piece)) {
            auto& nodes = drafts_[parent].nodes;
            nodes.insert(nodes.end(), piece.begin(), piece.end());
            return;
        }
        std::string name = spanName(piece);
        addDraft(parent, std::move(name), GroupSource::Section, std::move(piece));
    }

    /// A group with too many direct members: repeated blocks, else contiguous sections. New drafts
    /// are appended and visited by the caller's loop (their own members split in turn).
    void splitDirect(size_t d) {
        if (drafts_[d].nodes.size() <= opt_.maxDirectNodes) return;
        std::vector<NodeId> seq = std::move(drafts_[d].nodes);
        drafts_[d].nodes.clear();
        std::vector<uint32_t> tokens;
        tokens.reserve(seq.size());
        for (NodeId id : seq) tokens.push_back(tokenOf(g_.node(id)));
        const auto cost = liveAcross(seq);
        auto slice = [&](size_t a, size_t b) { return std::vector<NodeId>(seq.begin() + long(a), seq.begin() + long(b)); };
        if (auto run = findRepeatedBlocks(tokens, opt_.minBlockNodes, opt_.maxBlockNodes, &cost)) {
            addPiece(d, slice(0, run->start));
            for (size_t k = 0; k < run->count; ++k) {
                const size_t a = run->start + k * run->period;
                addDraft(d, "block." + std::to_string(k), GroupSource::RepeatedBlock, slice(a, a + run->period));
            }
            addPiece(d, slice(run->start + run->count * run->period, seq.size()));
            return;
        }
        const size_t pieces = (seq.size() + opt_.maxDirectNodes - 1) / opt_.maxDirectNodes;
        const size_t size = (seq.size() + pieces - 1) / pieces;
        for (size_t a = 0; a < seq.size(); a += size) {
            auto part = slice(a, std::min(seq.size(), a + size));
            std::string name = spanName(part);
            addDraft(d, std::move(name), GroupSource::Section, std::move(part));
        }
    }

    /// More children than a box count can show: nest consecutive runs of them in ranges.
    void nestRanges(size_t d) {
        while (drafts_[d].children.size() > opt_.maxChildren) {
            std::vector<size_t> kids = std::move(drafts_[d].children);
            drafts_[d].children.clear();
            const size_t pieces = (kids.size() + opt_.maxChildren - 1) / opt_.maxChildren;
            const size_t size = (kids.size() + pieces - 1) / pieces;
            for (size_t a = 0; a < kids.size(); a += size) {
                const size_t b = std::min(kids.size(), a + size);
                Draft r;
                r.name = drafts_[kids[a]].name + " … " + drafts_[kids[b - 1]].name;
                r.source = GroupSource::Range;
                r.children.assign(kids.begin() + long(a), kids.begin() + long(b));
                drafts_.push_back(std::move(r));
                drafts_[d].children.push_back(drafts_.size() - 1);
            }
        }
    }

    /// Final groups in pre-order (parents first, a subtree's ids contiguous).
    void emit(Hierarchy& h) {
        struct Frame { size_t draft; GroupId parent; };
        std::vector<Frame> stack{{0, kNoGroup}};
        std::vector<GroupId> idOfDraft(drafts_.size(), kNoGroup);
        while (!stack.empty()) {
            auto [d, parent] = stack.back();
            stack.pop_back();
            Group grp;
            grp.id = GroupId(h.groups.size());
            grp.parent = parent;
            grp.name = drafts_[d].name;
            grp.source = drafts_[d].source;
            grp.nodes = drafts_[d].nodes;
            if (parent != kNoGroup) {
                const Group& p = h.groups[parent];
                grp.depth = p.depth + 1;
                grp.path = p.path.empty() ? grp.name : p.path + "/" + grp.name;
                h.groups[parent].children.push_back(grp.id);
            }
            for (NodeId n : grp.nodes) h.groupOfNode[n] = grp.id;
            idOfDraft[d] = grp.id;
            h.groups.push_back(std::move(grp));
            const auto& kids = drafts_[d].children;
            for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, idOfDraft[d]});
        }
        // Subtree ends: a group's descendants follow it; walk back accumulating.
        for (auto& grp : h.groups) grp.subtreeEnd = grp.id + 1;
        for (size_t i = h.groups.size(); i-- > 1;) {
            Group& grp = h.groups[i];
            Group& parent = h.groups[grp.parent];
            parent.subtreeEnd = std::max(parent.subtreeEnd, grp.subtreeEnd);
        }
    }

    void summarize(Hierarchy& h) {
        for (auto& grp : h.groups) {
            std::vector<NodeId> members = h.membersOf(grp.id);
            std::sort(members.begin(), members.end(), [&](NodeId a, NodeId b) { return pos_.at(a) < pos_.at(b); });
            grp.nodeCount = members.size();
            std::unordered_map<std::string, size_t> ops;
            std::unordered_set<ir::ValueId> params;
            for (NodeId id : members) {
                const ir::Node& n = g_.node(id);
                if (n.opType == "Constant" && n.domain.empty()) {
                    if (const ir::Attribute* a = n.attr("value"); a && a->t) grp.parameterBytes += a->t->byteSize();
                    continue;
                }
                ++grp.opCount;
                ++ops[n.opType];
                for (ir::ValueId v : n.inputs)
                    if (v != ir::kNone && g_.value(v).initializer && params.insert(v).second)
                        grp.parameterBytes += g_.value(v).initializer->byteSize();
            }
            grp.dominantOps = rankOps(ops, 3);
            grp.structuralHash = structuralHash(g_, members);
        }
        for (auto& grp : h.groups) {
            std::unordered_map<uint64_t, size_t> same;
            for (GroupId c : grp.children) ++same[h.groups[c].structuralHash];
            for (GroupId c : grp.children) h.groups[c].identicalSiblings = same[h.groups[c].structuralHash];
        }
    }

    const ir::Graph& g_;
    const HierarchyOptions& opt_;
    std::vector<Draft> drafts_;
    std::unordered_map<NodeId, size_t> pos_;
    std::unordered_map<std::string, uint32_t> tokens_;
};

}  // namespace

Hierarchy buildHierarchy(const ir::Graph& g, const HierarchyOptions& options) { return Builder(g, options).build(); }

Hierarchy flatHierarchy(const ir::Graph& g) {
    Hierarchy h;
    Group root;
    root.id = kRootGroup;
    root.subtreeEnd = 1;
    root.nodes = g.nodeOrder();
    root.nodeCount = root.nodes.size();
    for (NodeId n : root.nodes) h.groupOfNode[n] = kRootGroup;
    h.groups.push_back(std::move(root));
    return h;
}

}  // namespace passlens::hierarchy
