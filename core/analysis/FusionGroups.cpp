// TVM FuseOps over the top-level graph (see FusionGroups.h). The structure follows
// relay/transforms/fuse_ops.cc: an indexed forward graph with edge patterns, a post-dominator tree
// whose nodes carry the combined pattern of the edges up to the parent, union-find groups, and
// RunFuse phases 0 and 1 (no tuple phase: ONNX has multi-output nodes instead of tuples). On top of
// TVM, every decision that refuses a fusion is kept with the node/edge that caused it.
#include "analysis/FusionGroups.h"

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include "ir/Error.h"
#include "ir/Model.h"

namespace passlens::analysis {

using ir::kNone;
using ir::NodeId;
using ir::ValueId;

namespace {

struct Edge {
    uint32_t to;        ///< topological index of the consumer
    ValueId value;
    OpPattern pattern;
};

struct ForwardNode {
    NodeId id;
    OpPattern pattern;
    bool constant = false;
    ValueId externOutput = kNone;  ///< an output that is a graph output (TVM's extern_ref)
    std::vector<Edge> outputs;
};

/// A post-dominator tree node: parent (topological index, -1 = none), depth, and the combined
/// pattern of the edges up to the parent with the node/edge that raised it highest.
struct TreeNode {
    int parent = -1;
    int depth = 1;
    OpPattern pattern = OpPattern::ElemWise;
    NodeId blockNode = kNone;
    ValueId blockValue = kNone;
};

struct Group {
    int parent = -1;              ///< union-find parent (-1 = root)
    OpPattern pattern;
    int anchor = -1;              ///< topological index of the OutEWiseFusable member
    int numNodes = 1;
};

bool above(OpPattern a, OpPattern b) { return static_cast<int>(a) > static_cast<int>(b); }

class Fuser {
public:
    Fuser(const ir::Graph& g, const FusionOptions& options) : g_(g), options_(options) {}

    FusionPlan run() {
        buildForwardGraph();
        buildPostDominatorTree();
        groups_.resize(nodes_.size());
        for (size_t i = 0; i < nodes_.size(); ++i) {
            groups_[i].pattern = nodes_[i].pattern;
            if (nodes_[i].pattern == OpPattern::OutEWiseFusable) groups_[i].anchor = static_cast<int>(i);
        }
        refusals_.resize(nodes_.size());
        for (int phase = 0; phase < 2; ++phase) runPhase(phase);
        return makePlan();
    }

private:
    const ir::Graph& g_;
    const FusionOptions& options_;
    std::vector<ForwardNode> nodes_;
    std::vector<uint32_t> indexOf_;   ///< NodeId -> topological index
    std::vector<TreeNode> tree_;
    std::vector<Group> groups_;
    std::vector<std::optional<FusionRefusal>> refusals_;

    std::string name(NodeId n) const { return g_.node(n).displayName(); }
    std::string nameAt(size_t i) const { return name(nodes_[i].id); }
    std::string valueName(ValueId v) const { return v == kNone ? std::string("?") : "'" + g_.value(v).name + "'"; }

    void buildForwardGraph() {
        auto topo = g_.topologicalOrder();
        if (!topo) throw Error(ErrorKind::BadInput, "fusion groups: the graph has a cycle");
        indexOf_.assign(g_.nodeIdLimit(), UINT32_MAX);
        nodes_.reserve(topo->size());
        for (NodeId n : *topo) {
            indexOf_[n] = static_cast<uint32_t>(nodes_.size());
            const auto& node = g_.node(n);
            ForwardNode fn{n, patternOf(g_, n), false, kNone, {}};
            fn.constant = node.opType == "Constant" && ir::canonicalDomain(node.domain).empty() && node.inputs.empty();
            if (fn.constant) fn.pattern = OpPattern::Opaque;
            for (ValueId v : node.outputs)
                if (v != kNone && g_.value(v).isGraphOutput && fn.externOutput == kNone) fn.externOutput = v;
            nodes_.push_back(std::move(fn));
        }
        // Edges producer -> reader, including reads through subgraph captures (readsOf).
        for (uint32_t i = 0; i < nodes_.size(); ++i) {
            NodeId n = nodes_[i].id;
            std::set<ValueId> seen;
            for (ValueId v : g_.readsOf(n)) {
                if (v == kNone || !seen.insert(v).second) continue;
                NodeId p = g_.value(v).producer;
                if (p == kNone) continue;
                nodes_[indexOf_[p]].outputs.push_back({i, v, edgePattern(g_, n, v)});
            }
        }
    }

    static void combine(TreeNode& t, OpPattern p, NodeId node, ValueId value) {
        if (above(p, t.pattern)) { t.pattern = p; t.blockNode = node; t.blockValue = value; }
    }

    /// TVM's DominatorTree::LeastCommonAncestor, accumulating the patterns climbed over.
    int lca(int a, int b, TreeNode& acc) const {
        while (a != b) {
            if (a < 0 || b < 0) return -1;
            const TreeNode& ta = tree_[a];
            const TreeNode& tb = tree_[b];
            if (ta.depth < tb.depth) {
                combine(acc, tb.pattern, tb.blockNode, tb.blockValue);
                b = tb.parent;
            } else if (tb.depth < ta.depth) {
                combine(acc, ta.pattern, ta.blockNode, ta.blockValue);
                a = ta.parent;
            } else {
                combine(acc, ta.pattern, ta.blockNode, ta.blockValue);
                combine(acc, tb.pattern, tb.blockNode, tb.blockValue);
                a = ta.parent;
                b = tb.parent;
            }
        }
        return a;
    }

    void buildPostDominatorTree() {
        tree_.assign(nodes_.size(), TreeNode{});
        for (size_t k = nodes_.size(); k-- > 0;) {
            const ForwardNode& fn = nodes_[k];
            TreeNode& t = tree_[k];
            if (fn.externOutput != kNone || fn.outputs.empty()) {
                t.parent = -1;  // a graph output (or an unread value) reaches the virtual exit directly
                t.depth = 1;
                t.pattern = OpPattern::Opaque;
                continue;
            }
            TreeNode acc;
            int parent = static_cast<int>(fn.outputs[0].to);
            combine(acc, fn.outputs[0].pattern, nodes_[fn.outputs[0].to].id, fn.outputs[0].value);
            for (size_t e = 1; e < fn.outputs.size(); ++e) {
                parent = lca(parent, static_cast<int>(fn.outputs[e].to), acc);
                combine(acc, fn.outputs[e].pattern, nodes_[fn.outputs[e].to].id, fn.outputs[e].value);
            }
            acc.parent = parent;
            acc.depth = parent < 0 ? 1 : tree_[parent].depth + 1;
            t = acc;
        }
    }

    int find(int i) {
        while (groups_[i].parent >= 0) {
            if (groups_[groups_[i].parent].parent >= 0) groups_[i].parent = groups_[groups_[i].parent].parent;
            i = groups_[i].parent;
        }
        return i;
    }

    void mergeFromTo(int child, int parent) {
        child = find(child);
        parent = find(parent);
        if (child == parent) return;
        groups_[parent].numNodes += groups_[child].numNodes;
        groups_[child].parent = parent;
        if (groups_[child].anchor >= 0) {
            groups_[parent].anchor = groups_[child].anchor;
            if (above(groups_[child].pattern, groups_[parent].pattern)) groups_[parent].pattern = groups_[child].pattern;
        }
    }

    /// Visited marks for one walk between a node and its post-dominator: a stamp per node, so a
    /// walk costs what it visits, not a fresh array of every node (which made grouping quadratic).
    std::vector<uint32_t> visitStamp_;
    uint32_t visitEpoch_ = 0;
    struct Visited {
        std::vector<uint32_t>& stamp;
        uint32_t epoch;
        bool test(int v) const { return stamp[static_cast<size_t>(v)] == epoch; }
        void set(int v) const { stamp[static_cast<size_t>(v)] = epoch; }
    };
    Visited freshVisit() {
        if (visitStamp_.size() != nodes_.size() || ++visitEpoch_ == 0) {
            visitStamp_.assign(nodes_.size(), 0);
            visitEpoch_ = 1;
        }
        return {visitStamp_, visitEpoch_};
    }

    /// The first node on a path src -> sink that fails `ok`, with the edge that reached it.
    struct PathFailure { int node = -1; ValueId via = kNone; };

    template <typename Cond>
    std::optional<PathFailure> checkPath(int src, int sink, Cond ok) {
        const Visited visited = freshVisit();
        std::vector<std::pair<int, ValueId>> stack;
        for (const Edge& e : nodes_[src].outputs) stack.push_back({static_cast<int>(e.to), e.value});
        // Depth first in edge order, so the reported blocker is the first one along the first path.
        std::reverse(stack.begin(), stack.end());
        while (!stack.empty()) {
            auto [v, via] = stack.back();
            stack.pop_back();
            if (visited.test(v)) continue;
            visited.set(v);
            if (!ok(groups_[find(v)].pattern, v == sink)) return PathFailure{v, via};
            if (v == sink) continue;
            const auto& outs = nodes_[v].outputs;
            for (auto it = outs.rbegin(); it != outs.rend(); ++it) stack.push_back({static_cast<int>(it->to), it->value});
        }
        return std::nullopt;
    }

    /// Nodes the target group would hold after src and everything between src and sink join it.
    int countWithNewChild(int src, int sink) {
        std::set<int> roots;
        const Visited visited = freshVisit();
        std::vector<int> stack{src};
        int target = find(sink);
        while (!stack.empty()) {
            int v = stack.back();
            stack.pop_back();
            if (v == sink || visited.test(v)) continue;
            visited.set(v);
            if (find(v) != target) roots.insert(find(v));
            for (const Edge& e : nodes_[v].outputs) stack.push_back(static_cast<int>(e.to));
        }
        int total = groups_[target].numNodes;
        for (int r : roots) total += groups_[r].numNodes;
        return total;
    }

    void commitFuse(int src, int sink) {
        int target = find(sink);
        const Visited visited = freshVisit();
        std::vector<int> stack{src};
        while (!stack.empty()) {
            int v = stack.back();
            stack.pop_back();
            if (v == sink || visited.test(v)) continue;
            visited.set(v);
            mergeFromTo(v, target);
            target = find(target);
            for (const Edge& e : nodes_[v].outputs) stack.push_back(static_cast<int>(e.to));
        }
    }

    void refuse(int i, std::string rule, NodeId blockingNode, ValueId blockingValue, std::string message) {
        FusionRefusal r;
        r.node = nodes_[i].id;
        r.wanted = tree_[i].parent < 0 ? kNone : nodes_[tree_[i].parent].id;
        r.rule = std::move(rule);
        r.blockingNode = blockingNode;
        r.blockingValue = blockingValue;
        r.message = std::move(message);
        refusals_[i] = std::move(r);
    }

    /// Records why a path check failed: a group that already holds an anchor, or a node above the limit.
    void refusePath(int i, int sink, const PathFailure& f, std::string_view limit) {
        int root = find(f.node);
        const std::string who = nameAt(i), into = nameAt(sink);
        if (groups_[root].anchor >= 0 && groups_[root].anchor != i && groups_[root].pattern == OpPattern::OutEWiseFusable &&
            nodes_[f.node].pattern != OpPattern::OutEWiseFusable && nodes_[f.node].pattern != OpPattern::Opaque) {
            NodeId anchor = nodes_[groups_[root].anchor].id;
            refuse(i, "one-anchor-per-group", anchor, f.via,
                   who + " cannot join " + into + ": on the way, " + nameAt(f.node) + " is already fused with anchor " +
                       name(anchor) + " (a group has one anchor)");
            return;
        }
        refuse(i, "path-not-injective", nodes_[f.node].id, f.via,
               who + " cannot join " + into + ": " + nameAt(f.node) + " (" + std::string(patternName(groups_[root].pattern)) +
                   ") on the way through edge " + valueName(f.via) + " is above " + std::string(limit));
    }

    bool fitsDepth(int i, int sink) {
        int total = countWithNewChild(i, sink);
        if (total <= options_.maxDepth) return true;
        refuse(i, "max-depth", nodes_[sink].id, kNone,
               nameAt(i) + " cannot join " + nameAt(sink) + ": the group would hold " + std::to_string(total) +
                   " nodes, more than the depth limit " + std::to_string(options_.maxDepth));
        return false;
    }

    void runPhase(int phase) {
        for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
            // As TVM: the node's own group record (its pattern changes when an anchor merged into it).
            const OpPattern pattern = groups_[i].pattern;
            if (pattern == OpPattern::Opaque) continue;
            const int p = tree_[i].parent;
            if (p < 0) continue;
            if (find(i) == find(p)) continue;
            const TreeNode& dom = tree_[i];
            const std::string who = nameAt(i), into = nameAt(p);
            if (pattern == OpPattern::OutEWiseFusable) {
                if (phase != 0) continue;
                if (dom.pattern != OpPattern::ElemWise) {
                    // The record may be an epilogue node that an anchor merged into: name the anchor too.
                    const int anchor = groups_[find(i)].anchor;
                    const std::string group = anchor >= 0 && anchor != i ? who + " (fused with anchor " + nameAt(anchor) + ")" : who;
                    refuse(i, "anchor-needs-elemwise-path", dom.blockNode, dom.blockValue,
                           group + " cannot absorb the path to " + into + ": edge " + valueName(dom.blockValue) + " into " +
                               name(dom.blockNode) + " is " + std::string(patternName(dom.pattern)) + ", not ElemWise");
                    continue;
                }
                auto fail = checkPath(i, p, [](OpPattern k, bool) { return !above(k, OpPattern::Broadcast); });
                if (fail) { refusePath(i, p, *fail, "Broadcast"); continue; }
                if (!fitsDepth(i, p)) continue;
                commitFuse(i, p);
            } else if (!above(pattern, OpPattern::Broadcast)) {
                if (above(dom.pattern, OpPattern::Injective) && dom.pattern != OpPattern::CommReduce) {
                    const bool atSink = dom.blockNode == nodes_[p].id;
                    refuse(i, atSink ? "sink-not-fusable" : "path-not-injective", dom.blockNode, dom.blockValue,
                           who + " cannot fuse into " + into + ": edge " + valueName(dom.blockValue) + " into " +
                               name(dom.blockNode) + " is " + std::string(patternName(dom.pattern)) +
                               (atSink ? " (elementwise ops fuse only into injective, reduction or anchored groups)"
                                       : " on the way (every node between must be Injective or below)"));
                    continue;
                }
                auto fail = checkPath(i, p, [](OpPattern k, bool isSink) {
                    return isSink ? k != OpPattern::Opaque : !above(k, OpPattern::Injective);
                });
                if (fail) { refusePath(i, p, *fail, "Injective"); continue; }
                if (!fitsDepth(i, p)) continue;
                commitFuse(i, p);
            } else if (pattern == OpPattern::Injective) {
                if (phase != 1) continue;
                auto fail = checkPath(i, p, [](OpPattern k, bool) { return !above(k, OpPattern::Injective); });
                if (fail) { refusePath(i, p, *fail, "Injective"); continue; }
                if (!fitsDepth(i, p)) continue;
                commitFuse(i, p);
            } else {  // CommReduce
                const Edge& first = nodes_[i].outputs.front();
                refuse(i, "reduce-is-terminal", nodes_[first.to].id, first.value,
                       who + " is a reduction: its result is not fused into its readers (" + into + " is its post-dominator)");
            }
        }
    }

    FusionRefusal finalRefusal(size_t i) const {
        const ForwardNode& fn = nodes_[i];
        FusionRefusal r;
        r.node = fn.id;
        r.wanted = tree_[i].parent < 0 ? kNone : nodes_[tree_[i].parent].id;
        if (fn.constant) {
            r.rule = "constant";
            r.blockingNode = fn.id;
            r.message = nameAt(i) + " is a Constant: data, not a kernel, never fused";
        } else if (fn.pattern == OpPattern::Opaque) {
            r.rule = "opaque";
            r.blockingNode = fn.id;
            r.message = nameAt(i) + " (" + g_.node(fn.id).opType + ") is Opaque: it is a group of its own";
        } else if (tree_[i].parent < 0) {
            r.rule = "no-postdom";
            if (fn.externOutput != kNone) {
                r.blockingValue = fn.externOutput;
                r.message = nameAt(i) + " has no post-dominator: its output " + valueName(fn.externOutput) + " is a graph output";
            } else if (fn.outputs.empty()) {
                r.message = nameAt(i) + " has no post-dominator: no node reads its outputs";
            } else {
                r.blockingNode = nodes_[fn.outputs.back().to].id;
                r.blockingValue = fn.outputs.back().value;
                r.message = nameAt(i) + " has no post-dominator: its readers reach the graph outputs along separate paths";
            }
        } else if (refusals_[i]) {
            r = *refusals_[i];
        } else {
            r.rule = "not-considered";  // defensive: every non-opaque node with a parent is visited
            r.message = nameAt(i) + " was not considered for fusion";
        }
        return r;
    }

    FusionPlan makePlan() {
        FusionPlan plan;
        plan.groupIndex.assign(g_.nodeIdLimit(), -1);
        plan.postDominators.assign(g_.nodeIdLimit(), kNone);
        for (size_t i = 0; i < nodes_.size(); ++i)
            if (tree_[i].parent >= 0) plan.postDominators[nodes_[i].id] = nodes_[tree_[i].parent].id;
        std::vector<int> idOfRoot(nodes_.size(), -1);
        for (size_t i = 0; i < nodes_.size(); ++i) {
            int root = find(static_cast<int>(i));
            if (idOfRoot[root] < 0) {
                idOfRoot[root] = static_cast<int>(plan.groups.size());
                FusionGroup grp;
                grp.id = idOfRoot[root];
                grp.pattern = groups_[root].pattern;
                plan.groups.push_back(grp);
            }
            FusionGroup& grp = plan.groups[idOfRoot[root]];
            grp.members.push_back(nodes_[i].id);
            plan.groupIndex[nodes_[i].id] = grp.id;
        }
        // Anchor: the OutEWiseFusable member, else the member of the highest kind (last on ties).
        for (auto& grp : plan.groups) {
            NodeId best = grp.members.back();
            OpPattern bestKind = OpPattern::ElemWise;
            for (NodeId m : grp.members) {
                OpPattern k = nodes_[indexOf_[m]].pattern;
                if (!above(bestKind, k)) { best = m; bestKind = k; }
            }
            grp.anchor = best;
        }
        for (size_t i = 0; i < nodes_.size(); ++i) {
            int p = tree_[i].parent;
            if (p >= 0 && find(static_cast<int>(i)) == find(p)) continue;
            plan.refusals.push_back(finalRefusal(i));
        }
        return plan;
    }
};

}  // namespace

int FusionPlan::groupOf(ir::NodeId n) const {
    return n < groupIndex.size() ? groupIndex[n] : -1;
}

const FusionGroup* FusionPlan::groupFor(ir::NodeId n) const {
    int gi = groupOf(n);
    return gi < 0 ? nullptr : &groups[gi];
}

const FusionRefusal* FusionPlan::refusalFor(ir::NodeId n) const {
    for (const auto& r : refusals)
        if (r.node == n) return &r;
    return nullptr;
}

ir::NodeId FusionPlan::postDominatorOf(ir::NodeId n) const {
    return n < postDominators.size() ? postDominators[n] : kNone;
}

size_t FusionPlan::kernelCount(const ir::Graph& g) const {
    size_t count = 0;
    for (const auto& grp : groups) {
        bool onlyConstants = std::all_of(grp.members.begin(), grp.members.end(), [&](NodeId m) {
            return g.node(m).opType == "Constant" && g.node(m).inputs.empty();
        });
        if (!onlyConstants) ++count;
    }
    return count;
}

size_t FusionPlan::multiMemberGroupCount() const {
    return static_cast<size_t>(std::count_if(groups.begin(), groups.end(), [](const FusionGroup& grp) { return grp.members.size() >= 2; }));
}

FusionPlan computeFusionGroups(const ir::Graph& g, const FusionOptions& options) {
    if (options.maxDepth < 1) throw Error(ErrorKind::BadInput, "fusion groups: max depth must be at least 1");
    return Fuser(g, options).run();
}

const std::vector<std::string_view>& fusionRuleCodes() {
    static const std::vector<std::string_view> codes = {
        "opaque", "constant", "no-postdom", "reduce-is-terminal", "anchor-needs-elemwise-path",
        "sink-not-fusable", "path-not-injective", "one-anchor-per-group", "max-depth"};
    return codes;
}

}  // namespace passlens::analysis
