#pragma once
// Fusion groups as TVM's FuseOps pass forms them (relay/transforms/fuse_ops.cc), over the
// top-level graph: each node starts in its own group; walking the post-dominator tree, a node joins
// the group of its immediate post-dominator when the rules of its phase allow it:
//   phase 0  an OutEWiseFusable anchor (Conv, MatMul, Gemm, pools) absorbs an ElemWise path to its
//            post-dominator; ElemWise/Broadcast nodes fuse into an Injective/CommReduce sink (or a
//            group that already holds an anchor) when every node on every path is <= Injective;
//   phase 1  Injective nodes fuse when every node on every path (sink included) is <= Injective.
// A depth limit bounds the number of nodes in a group. Every node that does not end in its
// post-dominator's group gets a FusionRefusal naming the rule and the node/edge that blocked it.
// One graph at a time: in the graph given, an If/Loop node is one Opaque node (its bodies can be
// grouped by calling this on each body, as group-functions does).
#include <string>
#include <string_view>
#include <vector>

#include "analysis/OpRegistry.h"
#include "ir/Graph.h"

namespace passlens::analysis {

struct FusionGroup {
    int id = -1;                        ///< index into FusionPlan::groups
    ir::NodeId anchor = ir::kNone;      ///< the master node: the OutEWiseFusable member if any, else the last member
    std::vector<ir::NodeId> members;    ///< topological order; the anchor is one of them
    OpPattern pattern = OpPattern::Opaque;  ///< the group's pattern (the anchor's kind, as TVM's Group::pattern)
};

/// Why node `node` did not join the group of its immediate post-dominator `wanted`.
/// Reason codes (rule):
///   opaque                      the node itself is Opaque (control flow, Softmax, custom domain, ...)
///   constant                    a Constant node: data, not a kernel; never fused
///   no-postdom                  no immediate post-dominator (its output is a graph output, or its
///                               readers reach the outputs along disjoint paths)
///   reduce-is-terminal          a CommReduce group does not fuse into what reads it
///   anchor-needs-elemwise-path  an OutEWiseFusable anchor: some edge on the way to the
///                               post-dominator is not ElemWise (blocking node/edge = that edge)
///   sink-not-fusable            an ElemWise/Broadcast node whose post-dominator is reached through
///                               an edge above Injective that is not a reduction (e.g. into a Conv)
///   path-not-injective          a node on a path to the post-dominator (or the post-dominator
///                               itself), or an edge on the way, is above Injective (for an
///                               anchor's path: above Broadcast)
///   one-anchor-per-group        the path meets a group that already has an anchor (two Conv
///                               outputs meeting in one Add: only the first one fuses)
///   max-depth                   joining would make the group larger than FusionOptions::maxDepth
struct FusionRefusal {
    ir::NodeId node = ir::kNone;
    ir::NodeId wanted = ir::kNone;         ///< the immediate post-dominator (kNone: none exists)
    std::string rule;                      ///< reason code, see above
    ir::NodeId blockingNode = ir::kNone;   ///< the node that stopped it (may be kNone)
    ir::ValueId blockingValue = ir::kNone; ///< the edge (value) into/out of blockingNode that stopped it
    std::string message;                   ///< one sentence, names by display name
};

struct FusionPlan {
    std::vector<FusionGroup> groups;       ///< ordered by the topological position of their first member
    std::vector<FusionRefusal> refusals;   ///< topological order of `node`; at most one per node
    std::vector<int> groupIndex;           ///< per NodeId (size nodeIdLimit()), -1 = not grouped
    std::vector<ir::NodeId> postDominators;///< per NodeId: immediate post-dominator used (kNone = none)

    /// Group id of a node, -1 when the node is unknown (e.g. a subgraph node).
    int groupOf(ir::NodeId n) const;
    const FusionGroup* groupFor(ir::NodeId n) const;
    /// The refusal recorded for a node, nullptr when it joined its post-dominator's group.
    const FusionRefusal* refusalFor(ir::NodeId n) const;
    /// Immediate post-dominator of a node as the fuser saw it (kNone: none / virtual exit).
    ir::NodeId postDominatorOf(ir::NodeId n) const;
    /// Kernels after fusion: groups, not counting groups made only of Constant nodes.
    size_t kernelCount(const ir::Graph& g) const;
    /// Groups with at least two members.
    size_t multiMemberGroupCount() const;
};

struct FusionOptions {
    int maxDepth = 256;  ///< max nodes per group (TVM's max_depth / relay.FuseOps.max_depth)
};

/// Fuses the top-level graph. Throws passlens::Error(BadInput) on a cyclic graph.
FusionPlan computeFusionGroups(const ir::Graph& g, const FusionOptions& options = {});

/// All reason codes in a stable order (documentation, JSON consumers).
const std::vector<std::string_view>& fusionRuleCodes();

}  // namespace passlens::analysis
