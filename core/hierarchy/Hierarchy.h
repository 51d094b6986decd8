#pragma once
// Groups of nodes for drawing large graphs: a tree whose leaves are the graph's nodes. Found, in
// this order, from PyTorch's `pkg.torch.onnx.name_scopes` node metadata, from '/'-separated node
// names ("/encoder/layer.3/attention/MatMul", TF's "a/b/c"), and for flat names ("MatMul_123")
// from repeated blocks in the op sequence (a transformer layer, a ResNet stage), else contiguous
// sections. Structurally identical groups share a hash (layer.0 … layer.23 "×24 identical").
// Plain data, no Qt; near-linear in the node count.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/Graph.h"

namespace passlens::hierarchy {

using GroupId = uint32_t;
inline constexpr GroupId kRootGroup = 0;
inline constexpr GroupId kNoGroup = UINT32_MAX;

/// Where a group came from.
enum class GroupSource { Root, Metadata, NodeNames, RepeatedBlock, Section, Range };
std::string_view sourceName(GroupSource s);

struct OpKindCount {
    std::string op;
    size_t count = 0;
};

struct Group {
    GroupId id = kNoGroup;
    GroupId parent = kNoGroup;
    GroupId subtreeEnd = 0;          ///< ids of this group's descendants are (id, subtreeEnd)
    std::string name;                ///< "layer.3", "block.7", "nodes 200–399"; "" for the root
    std::string path;                ///< names from the root's child down, '/'-joined
    int depth = 0;                   ///< root 0
    GroupSource source = GroupSource::Root;
    std::vector<GroupId> children;   ///< model order
    std::vector<ir::NodeId> nodes;   ///< direct members (not in a child group), model order
    // Summary over every member at any depth:
    size_t nodeCount = 0;            ///< all nodes
    size_t opCount = 0;              ///< nodes other than Constant
    std::vector<OpKindCount> dominantOps;  ///< up to 3 op types: computing ops before shape plumbing, then most frequent (no Constant)
    uint64_t parameterBytes = 0;     ///< initializers and Constant payloads read inside, each once
    uint64_t structuralHash = 0;     ///< op types, attributes and wiring; names ignored
    size_t identicalSiblings = 1;    ///< siblings (this one included) with the same hash
};

struct Hierarchy {
    std::vector<Group> groups;       ///< [kRootGroup] is the root; parents before children
    std::unordered_map<ir::NodeId, GroupId> groupOfNode;  ///< innermost group of every node
    GroupSource naming = GroupSource::Root;  ///< Metadata, NodeNames or RepeatedBlock/Section (flat names)

    const Group& group(GroupId id) const { return groups.at(id); }
    const Group& root() const { return groups.front(); }
    GroupId groupOf(ir::NodeId n) const;
    /// Groups from the root's child down to the node's innermost group (empty for a root member).
    std::vector<GroupId> pathTo(ir::NodeId n) const;
    bool isAncestorOrSelf(GroupId ancestor, GroupId g) const {
        return g == ancestor || (g > ancestor && g < groups[ancestor].subtreeEnd);
    }
    /// The group with this path ("encoder/layer.3"), if any.
    std::optional<GroupId> findPath(std::string_view path) const;
    /// Every node inside the group at any depth: group by group in pre-order, each group's own
    /// nodes in model order.
    std::vector<ir::NodeId> membersOf(GroupId id) const;
};

struct HierarchyOptions {
    size_t maxDirectNodes = 200;     ///< a group with more direct nodes is split automatically
    size_t maxChildren = 48;         ///< more child groups than this are nested in ranges
    size_t minBlockNodes = 8;        ///< shortest repeated block worth a group
    size_t maxBlockNodes = 600;      ///< longest repeated block searched for
    size_t keepDirect = 40;          ///< nodes before/after repeated blocks stay direct up to this many
};

Hierarchy buildHierarchy(const ir::Graph& g, const HierarchyOptions& options = {});

/// A flat hierarchy: every node a direct member of the root.
Hierarchy flatHierarchy(const ir::Graph& g);

// ---- pure helpers (unit-tested) -------------------------------------------------------------

inline constexpr std::string_view kNameScopesKey = "pkg.torch.onnx.name_scopes";

/// "['', 'encoder', 'layer.3']" → {"encoder", "layer.3"}: a Python list repr of strings (single or
/// double quotes), empty entries dropped. Malformed text gives what parsed before the problem.
std::vector<std::string> parseNameScopes(std::string_view pythonList);

/// "/encoder/layer.3/attention/MatMul" → {"encoder", "layer.3", "attention"}; the last segment names
/// the node itself. A name without '/' has no scopes.
std::vector<std::string> scopesFromNodeName(std::string_view name);

struct RepeatedRun {
    size_t start = 0;   ///< first token of the first block
    size_t period = 0;  ///< tokens per block
    size_t count = 0;   ///< blocks
};

/// The longest run of identical consecutive blocks in `tokens` (op kinds in model order), blocks of
/// minPeriod..maxPeriod tokens, at least 3 of them. `cutCost[i]` (optional, size tokens+1) is the
/// price of a block boundary before token i (e.g. values live across it): among the alignments of
/// the run the cheapest boundaries win. nullopt when the sequence has no such run, or is periodic
/// with a period below minPeriod (a uniform chain: sections read better than tiny blocks).
std::optional<RepeatedRun> findRepeatedBlocks(const std::vector<uint32_t>& tokens, size_t minPeriod, size_t maxPeriod,
                                              const std::vector<uint32_t>* cutCost = nullptr);

/// Hash of the members' op types, domains, attributes and internal wiring (by position among the
/// members), of external inputs only whether they are initializers and their dims. Names ignored.
uint64_t structuralHash(const ir::Graph& g, const std::vector<ir::NodeId>& members);

}  // namespace passlens::hierarchy
