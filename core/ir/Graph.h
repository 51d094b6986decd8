#pragma once
// The graph IR. Nodes and values carry ids that stay stable for the life of the graph and of
// every copy of it (pass snapshots), so two snapshots can be diffed by id. Ids are never reused.
// Consumers are kept up to date by the mutation methods below; passes go through the Rewriter
// (core/passes), which calls these and records what changed.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/Attribute.h"
#include "ir/Ids.h"
#include "ir/NodeList.h"
#include "ir/Tensor.h"
#include "ir/Type.h"

// AddressSanitizer builds check that no Node&/Value& is kept across a Rewriter edit (see
// Graph::beginReferenceChecks); -DPASSLENS_REFERENCE_CHECKS=1 turns the checks on elsewhere.
#ifndef PASSLENS_REFERENCE_CHECKS
#if defined(__SANITIZE_ADDRESS__)
#define PASSLENS_REFERENCE_CHECKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PASSLENS_REFERENCE_CHECKS 1
#endif
#endif
#endif
#ifndef PASSLENS_REFERENCE_CHECKS
#define PASSLENS_REFERENCE_CHECKS 0
#endif

namespace passlens::ir {

struct StringPair {
    std::string key, value;
    bool operator==(const StringPair&) const = default;
};

struct Value {
    ValueId id = kNone;
    std::string name;
    TypeInfo type;
    std::string docString;
    NodeId producer = kNone;        ///< kNone for graph inputs, initializers and outer-scope captures
    std::vector<NodeId> consumers;  ///< one entry per input slot that reads this value
    TensorPtr initializer;          ///< constant payload when this value is an initializer
    bool isGraphInput = false;
    bool isGraphOutput = false;
    bool isOuterScope = false;      ///< read inside a subgraph, defined in an enclosing graph
    bool hasValueInfo = false;      ///< the file (or shape inference) gave a value_info entry

    bool isConstant() const { return initializer != nullptr; }
    /// The dims when every one is known: an initializer's own dims, else the tensor type's static
    /// shape. The one place passes and analyses read static shapes from.
    std::optional<std::vector<int64_t>> staticDims() const;
    /// The rank when known (an initializer's, else the tensor type's).
    std::optional<size_t> rank() const;
};

struct Node {
    NodeId id = kNone;
    std::string name;
    std::string opType;
    std::string domain;             ///< "" = ai.onnx
    std::string docString;
    /// Fields of a newer ONNX than libonnx 1.12 parses (IR 9–11), in wire format, written back verbatim.
    std::string unknownFields;
    std::vector<ValueId> inputs;    ///< kNone marks an omitted optional input
    std::vector<ValueId> outputs;   ///< kNone marks an omitted optional output
    std::vector<Attribute> attributes;
    std::vector<NodeId> provenance; ///< ids of the original nodes this one replaced (empty = original)
    std::vector<StringPair> metadataProps;

    const Attribute* attr(std::string_view n) const;
    Attribute* attr(std::string_view n);
    int64_t attrInt(std::string_view n, int64_t dflt) const;
    float attrFloat(std::string_view n, float dflt) const;
    std::string attrString(std::string_view n, const std::string& dflt) const;
    std::vector<int64_t> attrInts(std::string_view n, std::vector<int64_t> dflt = {}) const;
    void setAttr(Attribute a);
    bool removeAttr(std::string_view n);
    bool hasSubgraphs() const;
    /// "Conv_7" or, for an unnamed node, "Conv#12".
    std::string displayName() const;
};

class Graph {
public:
    Graph() = default;
    Graph(const Graph& other);  ///< deep copy of structure; tensor payloads are shared
    Graph& operator=(const Graph& other);
    Graph(Graph&&) noexcept = default;
    Graph& operator=(Graph&&) noexcept = default;

    std::string name;
    std::string docString;
    /// Fields of a newer ONNX than libonnx 1.12 parses (IR 9–11), in wire format, written back verbatim.
    std::string unknownFields;
    std::vector<StringPair> metadataProps;
    std::vector<std::string> sparseInitializers;  ///< serialized SparseTensorProto, kept verbatim

    // ---- values -----------------------------------------------------------------------------
    ValueId addValue(std::string name, TypeInfo type = {});
    /// A value read inside this (sub)graph but defined in an enclosing scope.
    ValueId addOuterScopeValue(std::string name);
    ValueId addInitializer(std::string name, TensorPtr tensor);
    ValueId addInput(std::string name, TypeInfo type);
    void markOutput(ValueId v);
    void setOutputs(std::vector<ValueId> outs);
    void setInputs(std::vector<ValueId> ins);
    void setInitializer(ValueId v, TensorPtr tensor);  ///< nullptr removes it
    void removeValue(ValueId v);                        ///< must have no producer and no consumers

    Value& value(ValueId v);
    const Value& value(ValueId v) const;
    bool hasValue(ValueId v) const { return v < values_.size() && values_[v] != nullptr; }
    std::optional<ValueId> findValue(const std::string& name) const;

    // ---- nodes ------------------------------------------------------------------------------
    /// Appends a node (at the end of the node list, or before `before`). Outputs must be values
    /// without a producer.
    NodeId addNode(std::string opType, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                   std::vector<Attribute> attributes = {}, std::string name = {}, std::string domain = {},
                   NodeId before = kNone);
    void eraseNode(NodeId n);   ///< detaches inputs; outputs lose their producer
    void setNodeInput(NodeId n, size_t slot, ValueId v);
    void setNodeInputs(NodeId n, std::vector<ValueId> inputs);
    /// Makes `v` (a value with no producer, or kNone) output `slot` of `n`; the old output loses its producer.
    void setNodeOutput(NodeId n, size_t slot, ValueId v);
    /// Node inputs, graph outputs and subgraph captures of `from` now read `to`.
    void replaceAllUsesWith(ValueId from, ValueId to);
    /// Subgraphs (at any depth) that capture outer name `from` capture `to` instead.
    void renameCaptures(const std::string& from, const std::string& to);
    void renameValue(ValueId v, const std::string& newName);
    void moveNodeBefore(NodeId n, NodeId before);

    Node& node(NodeId n);
    const Node& node(NodeId n) const;
    bool hasNode(NodeId n) const { return n < nodes_.size() && nodes_[n] != nullptr; }
    std::optional<NodeId> findNode(const std::string& name) const;

    /// Nodes in list order (the file's order; kept topological by the passes). After an insert
    /// or erase the vector is rebuilt on the next call (O(n)); walk with firstNode()/nextNode()
    /// or compare with precedes() where a loop edits the graph.
    const std::vector<NodeId>& nodeOrder() const {
        noteLentList(kLentOrder);
        return order_.ids();
    }
    size_t nodeCount() const { return order_.size(); }
    NodeId firstNode() const { return order_.first(); }
    NodeId lastNode() const { return order_.last(); }
    /// The node after / before `n` in list order (kNone at the end).
    NodeId nextNode(NodeId n) const { return order_.next(n); }
    NodeId prevNode(NodeId n) const { return order_.prev(n); }
    /// True when node `a` stands before node `b` in list order. O(1).
    bool precedes(NodeId a, NodeId b) const { return order_.precedes(a, b); }
    /// Kahn topological order, stable with respect to list order. Empty optional on a cycle.
    std::optional<std::vector<NodeId>> topologicalOrder() const;
    void sortTopologically();   ///< throws BadInput naming the nodes of a cycle
    std::optional<NodeId> nodeOnCycle() const;
    /// The nodes of one cycle in dataflow order (each feeds the next, the last feeds the first),
    /// found iteratively so a 50k-node chain cannot overflow the stack. Empty when acyclic.
    std::vector<NodeId> findCycle() const;
    /// "a → b → c → a" for a cycle from findCycle(), at most `limit` names before an ellipsis.
    std::string describeCycle(const std::vector<NodeId>& cycle, size_t limit = 6) const;

    const std::vector<ValueId>& inputs() const {
        noteLentList(kLentInputs);
        return inputs_;
    }
    const std::vector<ValueId>& outputs() const {
        noteLentList(kLentOutputs);
        return outputs_;
    }
    const std::vector<ValueId>& initializerOrder() const {
        noteLentList(kLentInitializers);
        return initOrder_;
    }
    /// Values with value_info entries, in file order (export keeps it).
    std::vector<ValueId> valueInfoOrder() const;
    /// All live value ids, ascending.
    std::vector<ValueId> valueIds() const;
    uint32_t nodeIdLimit() const { return static_cast<uint32_t>(nodes_.size()); }
    uint32_t valueIdLimit() const { return static_cast<uint32_t>(values_.size()); }

    /// Nodes that hold subgraphs (If/Loop/Scan bodies), in list order, without a scan of every
    /// node. Tracked by addNode; a node given a graph attribute afterwards must be announced with
    /// noteSubgraphs(n) (Rewriter::setAttribute does).
    std::vector<NodeId> nodesWithSubgraphs() const;
    void noteSubgraphs(NodeId n);

    /// Names of outer-scope values the subgraphs of `n` read (resolved lazily by callers).
    std::vector<std::string> capturedNames(NodeId n) const;
    /// Values of this graph a node reads, explicitly or through its subgraphs' captures.
    std::vector<ValueId> readsOf(NodeId n) const;

    /// Calls f on this graph and every nested subgraph, depth first.
    void forEachGraph(const std::function<void(Graph&)>& f);
    void forEachGraph(const std::function<void(const Graph&)>& f) const;
    /// Values that may have become unused since the last call (created without a producer, lost
    /// their producer or their last reader); the caller re-checks each. Lets dead-value cleanup
    /// look only where an edit happened.
    std::vector<ValueId> takeValuesThatMayHaveDied() { return std::exchange(mayHaveDied_, {}); }
    /// A fresh, unused value name with the given prefix.
    std::string uniqueValueName(const std::string& prefix) const;
    std::string uniqueNodeName(const std::string& prefix) const;

    // ---- reference checks ---------------------------------------------------------------------
    /// While a Rewriter edits this graph (begin/end pairs nest), node() and value() remember each
    /// node and value they hand out, and invalidateReferences() (the Rewriter calls it after every
    /// edit) moves those to new memory and frees the old: a Node& or Value& kept across an edit
    /// then reads freed memory, and AddressSanitizer stops at that line. Ids stay valid; only
    /// references are invalidated. Without PASSLENS_REFERENCE_CHECKS these do nothing.
    /// The token expires with this graph object: a Rewriter that outlives its graph (a subgraph
    /// erased during the pass) skips endReferenceChecks().
    std::weak_ptr<const void> beginReferenceChecks();
    void endReferenceChecks();
    void invalidateReferences();

private:
    void addConsumer(ValueId v, NodeId n);
    void removeConsumer(ValueId v, NodeId n);

    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<std::unique_ptr<Value>> values_;
    NodeList order_;
    std::vector<ValueId> inputs_, outputs_, initOrder_;
    std::unordered_map<std::string, ValueId> valueByName_;
    std::unordered_map<std::string, uint32_t> nodeNameUses_;  ///< node name → how many nodes carry it
    /// prefix → smallest n for which prefix_n may be free (all lower ones taken), so a run of
    /// uniqueXName calls with one prefix does not probe from 1 each time. Lowered when a name frees.
    mutable std::unordered_map<std::string, size_t> valueSuffixHint_, nodeSuffixHint_;
    std::vector<ValueId> valueInfoSeq_;  ///< first-seen order of value_info entries (ids of removed values stay until a copy)
    std::vector<ValueId> mayHaveDied_;   ///< see takeValuesThatMayHaveDied()
    std::vector<NodeId> subgraphHolders_;  ///< candidates for nodesWithSubgraphs() (may hold erased ids)
    /// Nodes and values handed out since the last edit while reference checks are on. A copy or a
    /// move of the graph starts with none (checks belong to the Rewriter of this object).
    struct LentReferences {
        int depth = 0;
        std::shared_ptr<const char> alive;  ///< made by the first beginReferenceChecks()
        unsigned lists = 0;  ///< LentList bits
        std::vector<NodeId> nodes;
        std::vector<ValueId> values;
        std::vector<bool> nodeLent, valueLent;
        LentReferences() = default;
        LentReferences(const LentReferences&) {}
        LentReferences(LentReferences&&) noexcept {}
        LentReferences& operator=(const LentReferences&) { return *this; }
        LentReferences& operator=(LentReferences&&) noexcept { return *this; }
    };
    mutable LentReferences lent_;
    void noteLentNode(NodeId n) const;
    void noteLentValue(ValueId v) const;
    /// The id lists handed out by reference (a loop over nodeOrder() that edits the graph).
    enum LentList : unsigned { kLentOrder = 1, kLentInputs = 2, kLentOutputs = 4, kLentInitializers = 8 };
    void noteLentList([[maybe_unused]] unsigned list) const {
#if PASSLENS_REFERENCE_CHECKS
        if (lent_.depth > 0) lent_.lists |= list;
#endif
    }
    friend class GraphBuilderAccess;
public:
    void noteValueInfo(ValueId v);  ///< records file order of value_info entries
};

/// Deep copy helper used by Graph's copy constructor and by attribute copies.
std::shared_ptr<Graph> cloneGraph(const Graph& g);

}  // namespace passlens::ir
