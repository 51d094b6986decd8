#pragma once
// The one door through which passes mutate a graph. Every method records a Change (with pass
// name, rule, provenance and a human reason), so "what changed" is written once, here.
// Hold ids, never a Node& or Value&, across an edit: every edit invalidates the references the
// graph handed out before it, and AddressSanitizer builds report a read through a kept one
// (Graph::beginReferenceChecks).
#include <memory>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/ChangeLog.h"

namespace passlens::passes {

class Rewriter {
public:
    Rewriter(ir::Model& model, ir::Graph& graph, std::string passName, std::string graphPath,
             std::vector<Change>& changes, std::vector<Remark>& remarks);
    ~Rewriter();
    Rewriter(const Rewriter&) = delete;
    Rewriter& operator=(const Rewriter&) = delete;

    /// Read-only views: every edit goes through the methods below, which record it.
    const ir::Model& model() const { return model_; }
    const ir::Graph& graph() const { return graph_; }
    const std::string& graphPath() const { return graphPath_; }
    /// Rule name stamped on the following changes and remarks (cleared with an empty string).
    void setRule(std::string rule) { rule_ = std::move(rule); }
    bool changed() const { return changed_; }
    /// Changes recorded so far by this pass (all its rewriters): a sweep that adds none changed nothing.
    size_t changeCount() const { return changes_.size(); }

    // ---- building blocks ------------------------------------------------------------------------
    /// A fresh intermediate value named after `hint` (made unique).
    ir::ValueId newValue(const std::string& hint, ir::TypeInfo type = {});
    /// A fresh initializer named after `hint`. Recorded as part of the node change that uses it.
    ir::ValueId newInitializer(const std::string& hint, ir::TensorPtr tensor);
    /// Adds a node; `replaces` lists the nodes it stands for (their provenance is inherited).
    ir::NodeId addNode(const std::string& opType, std::vector<ir::ValueId> inputs, std::vector<ir::ValueId> outputs,
                       std::vector<ir::Attribute> attrs, const std::vector<ir::NodeId>& replaces,
                       const std::string& reason, const std::string& nameHint = {}, const std::string& domain = {});

    /// Adds a node derived from `derivedFrom` without replacing it (a backward node of a forward
    /// node): recorded as "added", with the forward node's origins as provenance ("came from").
    ir::NodeId addDerivedNode(const std::string& opType, std::vector<ir::ValueId> inputs,
                              std::vector<ir::ValueId> outputs, std::vector<ir::Attribute> attrs,
                              ir::NodeId derivedFrom, const std::string& reason, const std::string& nameHint = {},
                              const std::string& domain = {});
    /// A fresh value with exactly this name (a gradient output's public name); throws Internal when
    /// the name is taken, so callers check first where a clash is the user's input.
    ir::ValueId newValueNamed(const std::string& name, ir::TypeInfo type = {});
    /// The value named `name` in this graph or, in a subgraph that lacks it, a new capture of that
    /// name from an enclosing scope (an inlined branch's outside reads). Not recorded: no
    /// computation changes until a node reads it.
    ir::ValueId valueOrCapture(const std::string& name);
    /// Adds a graph input (a loss target, labels); recorded as "added graph input <name>".
    ir::ValueId addGraphInput(const std::string& name, ir::TypeInfo type, const std::string& reason);
    /// Replaces the list of graph outputs; recorded as "modified graph outputs".
    void setGraphOutputs(std::vector<ir::ValueId> outputs, const std::string& reason);

    // ---- annotations (the computation is unchanged, so nothing is recorded) ---------------------
    /// Renames a value (names only: readers follow by id). Throws Internal when the name is taken.
    void renameValue(ir::ValueId v, const std::string& name);
    /// Sets the type of a value (a created value's type, or one refined by inference).
    void setValueType(ir::ValueId v, ir::TypeInfo type);
    /// Replaces a node's metadata_props and doc_string (provenance notes a pass attaches).
    void setNodeAnnotations(ir::NodeId n, std::vector<ir::StringPair> metadataProps, std::string docString);

    // ---- rewrites ---------------------------------------------------------------------------------
    /// Replaces `group` by one new node computing the same outputs (fusion): the new node takes
    /// over `outputs` (values produced by nodes of the group); the group's nodes are erased.
    /// Inputs must be values defined outside the group. Returns the new node.
    ir::NodeId replaceNodes(const std::vector<ir::NodeId>& group, const std::string& opType,
                            std::vector<ir::ValueId> inputs, std::vector<ir::ValueId> outputs,
                            std::vector<ir::Attribute> attrs, const std::string& reason,
                            const std::string& nameHint = {}, const std::string& domain = {});
    /// Every reader of `from` (and the graph outputs) reads `to` instead.
    void replaceAllUsesWith(ir::ValueId from, ir::ValueId to, const std::string& reason);
    /// Bypasses a node whose output equals one of its inputs (Identity, x+0, ...): readers of
    /// output `outputIndex` read input `inputIndex`; the node is erased. Keeps a graph output's
    /// name by renaming when the output is a graph output.
    void bypassNode(ir::NodeId n, size_t inputIndex, size_t outputIndex, const std::string& reason);
    void setInput(ir::NodeId n, size_t slot, ir::ValueId v, const std::string& reason);
    void setAttribute(ir::NodeId n, ir::Attribute a, const std::string& reason);
    bool removeAttribute(ir::NodeId n, const std::string& name, const std::string& reason);
    /// Erases a node (its outputs must be unread, or `force` for dead-code removal of a chain).
    void eraseNode(ir::NodeId n, const std::string& reason);
    /// Replaces value `v` (produced by `producer`) by a constant initializer holding `tensor`; the
    /// producer is erased when none of its outputs is still read.
    ir::ValueId foldToConstant(ir::ValueId v, ir::TensorPtr tensor, const std::string& reason);
    /// Removes an initializer nothing reads.
    void removeInitializer(ir::ValueId v, const std::string& reason);
    /// Removes model.functions[index] (a model-local function nothing calls).
    void removeFunction(size_t index, const std::string& reason);
    /// Appends a model-local function; recorded as "added function <domain>::<name>".
    void addFunction(ir::Function f, const std::string& reason);
    /// Sets the opset import of `domain` ("" = ai.onnx); recorded when the version changes.
    void setOpsetImport(const std::string& domain, int64_t version, const std::string& reason);
    /// Drops the opset import of `domain` when present (no node uses the domain any more).
    void removeOpsetImport(const std::string& domain, const std::string& reason);
    /// Raises the model's IR version to at least `version`; recorded when it changes.
    void requireIrVersion(int64_t version, const std::string& reason);
    /// Puts the node list back in topological order after rewrites that placed a node early
    /// (order only: no change is recorded, the computation is the same).
    void restoreTopologicalOrder();
    /// Erases values with no producer, no readers, not graph I/O and not initializers.
    void removeDeadValues();

    // ---- remarks ----------------------------------------------------------------------------------
    void applied(const std::vector<ir::NodeId>& nodes, const std::string& message);
    void missed(const std::vector<ir::NodeId>& nodes, const std::string& message,
                const std::vector<ir::ValueId>& blockingValues = {});

    /// True when a subgraph of some node reads `v` by name (outer-scope capture): such a value
    /// may not be renamed or replaced without rewriting the subgraph.
    bool isCapturedBySubgraph(ir::ValueId v) const;

    /// Provenance of a node: its recorded original ids, or its own id when it is original.
    std::vector<ir::NodeId> originsOf(ir::NodeId n) const;

private:
    void remark(RemarkKind kind, const std::vector<ir::NodeId>& nodes, const std::string& message,
                const std::vector<ir::ValueId>& values);
    Change& record(ChangeKind kind, std::vector<ir::NodeId> nodes, std::string reason);
    std::vector<std::string> namesOf(const std::vector<ir::NodeId>& nodes) const;

    ir::Model& model_;
    ir::Graph& graph_;
    bool deadValuesSwept_ = false;  ///< the first removeDeadValues() scans everything, later ones the edits
    std::string pass_;
    std::string graphPath_;
    std::string rule_;
    std::vector<Change>& changes_;
    std::vector<Remark>& remarks_;
    bool changed_ = false;
    std::weak_ptr<const void> graphAlive_;  ///< expires if a pass erased this (sub)graph
};

}  // namespace passlens::passes
