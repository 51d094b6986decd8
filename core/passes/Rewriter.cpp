#include "passes/Rewriter.h"

#include <algorithm>
#include <unordered_set>

#include "ir/Error.h"

namespace passlens::passes {

using namespace passlens::ir;

std::string_view changeKindName(ChangeKind k) {
    switch (k) {
    case ChangeKind::Added: return "added";
    case ChangeKind::Removed: return "removed";
    case ChangeKind::Replaced: return "replaced";
    case ChangeKind::Rewired: return "rewired";
    case ChangeKind::Folded: return "folded";
    case ChangeKind::Modified: return "modified";
    }
    return "?";
}

std::string_view remarkKindName(RemarkKind k) { return k == RemarkKind::Applied ? "applied" : "missed"; }

Rewriter::Rewriter(Model& model, Graph& graph, std::string passName, std::string graphPath,
                   std::vector<Change>& changes, std::vector<Remark>& remarks)
    : model_(model), graph_(graph), pass_(std::move(passName)), graphPath_(std::move(graphPath)),
      changes_(changes), remarks_(remarks), graphAlive_(graph_.beginReferenceChecks()) {}

Rewriter::~Rewriter() {
    if (!graphAlive_.expired()) graph_.endReferenceChecks();
}

namespace {
/// Every edit ends by invalidating the Node&/Value& references handed out before it (checked
/// builds, Graph::invalidateReferences): callers hold ids across edits, never references.
struct EditScope {
    Graph& g;
    explicit EditScope(Graph& graph) : g(graph) {}
    ~EditScope() { g.invalidateReferences(); }
    EditScope(const EditScope&) = delete;
    EditScope& operator=(const EditScope&) = delete;
};
}  // namespace

std::vector<std::string> Rewriter::namesOf(const std::vector<NodeId>& nodes) const {
    std::vector<std::string> out;
    for (NodeId n : nodes) out.push_back(graph_.hasNode(n) ? graph_.node(n).displayName() : "#" + std::to_string(n));
    return out;
}

Change& Rewriter::record(ChangeKind kind, std::vector<NodeId> nodes, std::string reason) {
    changed_ = true;
    Change c;
    c.kind = kind;
    c.pass = pass_;
    c.rule = rule_;
    c.graphPath = graphPath_;
    c.nodeNames = namesOf(nodes);
    c.nodes = std::move(nodes);
    c.reason = std::move(reason);
    changes_.push_back(std::move(c));
    return changes_.back();
}

std::vector<NodeId> Rewriter::originsOf(NodeId n) const {
    const Node& node = graph_.node(n);
    return node.provenance.empty() ? std::vector<NodeId>{n} : node.provenance;
}

ValueId Rewriter::newValue(const std::string& hint, TypeInfo type) {
    EditScope edit(graph_);
    return graph_.addValue(graph_.uniqueValueName(hint.empty() ? "v" : hint), std::move(type));
}

ValueId Rewriter::newInitializer(const std::string& hint, TensorPtr tensor) {
    EditScope edit(graph_);
    changed_ = true;
    return graph_.addInitializer(graph_.uniqueValueName(hint.empty() ? "const" : hint), std::move(tensor));
}

NodeId Rewriter::addNode(const std::string& opType, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                         std::vector<Attribute> attrs, const std::vector<NodeId>& replaces, const std::string& reason,
                         const std::string& nameHint, const std::string& domain) {
    EditScope edit(graph_);
    std::vector<NodeId> provenance;
    for (NodeId r : replaces)
        for (NodeId o : originsOf(r)) provenance.push_back(o);
    std::sort(provenance.begin(), provenance.end());
    provenance.erase(std::unique(provenance.begin(), provenance.end()), provenance.end());
    // Insert before the earliest reader of any output, so the node list stays topological.
    NodeId before = kNone;
    for (ValueId v : outputs) {
        if (v == kNone) continue;
        for (NodeId c : graph_.value(v).consumers)
            if (before == kNone || graph_.precedes(c, before)) before = c;
    }
    std::string name = graph_.uniqueNodeName(nameHint.empty() ? opType : nameHint);
    NodeId id = graph_.addNode(opType, std::move(inputs), std::move(outputs), std::move(attrs), name, domain, before);
    graph_.node(id).provenance = provenance;
    Change& c = record(replaces.empty() ? ChangeKind::Added : ChangeKind::Replaced, {id}, reason);
    c.provenance = provenance;
    return id;
}

NodeId Rewriter::addDerivedNode(const std::string& opType, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                                std::vector<Attribute> attrs, NodeId derivedFrom, const std::string& reason,
                                const std::string& nameHint, const std::string& domain) {
    EditScope edit(graph_);
    NodeId id = addNode(opType, std::move(inputs), std::move(outputs), std::move(attrs), {}, reason, nameHint, domain);
    if (derivedFrom == kNone) return id;
    std::vector<NodeId> origins = originsOf(derivedFrom);
    graph_.node(id).provenance = origins;
    changes_.back().provenance = origins;  // the "added" change addNode just recorded
    return id;
}

ValueId Rewriter::newValueNamed(const std::string& name, TypeInfo type) {
    EditScope edit(graph_);
    if (graph_.findValue(name)) throw Error(ErrorKind::Internal, "value name '" + name + "' is already taken");
    return graph_.addValue(name, std::move(type));
}

ValueId Rewriter::valueOrCapture(const std::string& name) {
    EditScope edit(graph_);
    if (auto v = graph_.findValue(name)) return *v;
    if (graphPath_.empty()) throw Error(ErrorKind::Internal, "valueOrCapture: the main graph has no value '" + name + "'");
    return graph_.addOuterScopeValue(name);
}

ValueId Rewriter::addGraphInput(const std::string& name, TypeInfo type, const std::string& reason) {
    EditScope edit(graph_);
    if (graph_.findValue(name)) throw Error(ErrorKind::Internal, "value name '" + name + "' is already taken");
    ValueId v = graph_.addInput(name, std::move(type));
    Change& c = record(ChangeKind::Added, {}, reason);
    c.nodeNames = {"graph input " + name};
    return v;
}

void Rewriter::setGraphOutputs(std::vector<ValueId> outputs, const std::string& reason) {
    EditScope edit(graph_);
    if (outputs == graph_.outputs()) return;
    graph_.setOutputs(std::move(outputs));
    Change& c = record(ChangeKind::Modified, {}, reason);
    c.nodeNames = {"graph outputs"};
}

void Rewriter::renameValue(ValueId v, const std::string& name) {
    EditScope edit(graph_);
    if (graph_.value(v).name == name) return;
    if (graph_.findValue(name)) throw Error(ErrorKind::Internal, "value name '" + name + "' is already taken");
    graph_.renameValue(v, name);
}

void Rewriter::setValueType(ValueId v, TypeInfo type) {
    EditScope edit(graph_);
    graph_.value(v).type = std::move(type);
}

void Rewriter::setNodeAnnotations(NodeId n, std::vector<StringPair> metadataProps, std::string docString) {
    EditScope edit(graph_);
    Node& node = graph_.node(n);
    node.metadataProps = std::move(metadataProps);
    node.docString = std::move(docString);
}

NodeId Rewriter::replaceNodes(const std::vector<NodeId>& group, const std::string& opType, std::vector<ValueId> inputs,
                              std::vector<ValueId> outputs, std::vector<Attribute> attrs, const std::string& reason,
                              const std::string& nameHint, const std::string& domain) {
    EditScope edit(graph_);
    std::vector<NodeId> provenance;
    for (NodeId r : group)
        for (NodeId o : originsOf(r)) provenance.push_back(o);
    std::sort(provenance.begin(), provenance.end());
    provenance.erase(std::unique(provenance.begin(), provenance.end()), provenance.end());
    std::vector<std::string> removedNames = namesOf(group);
    // Position: where the last node of the group stood, so every input is already defined.
    NodeId last = kNone;
    for (NodeId n : group)
        if (last == kNone || graph_.precedes(last, n)) last = n;
    std::unordered_set<NodeId> inGroup(group.begin(), group.end());
    NodeId before = last == kNone ? graph_.firstNode() : graph_.nextNode(last);
    while (before != kNone && inGroup.count(before)) before = graph_.nextNode(before);
    // Erase the group (outputs keep their values; the new node becomes their producer).
    for (NodeId n : group) graph_.eraseNode(n);
    std::string name = graph_.uniqueNodeName(nameHint.empty() ? opType : nameHint);
    NodeId id = graph_.addNode(opType, std::move(inputs), std::move(outputs), std::move(attrs), name, domain, before);
    graph_.node(id).provenance = provenance;
    for (size_t i = 0; i < group.size(); ++i) {
        Change& rm = record(ChangeKind::Removed, {}, reason);
        rm.nodes = {group[i]};
        rm.nodeNames = {removedNames[i]};
    }
    Change& c = record(ChangeKind::Replaced, {id}, reason);
    c.provenance = provenance;
    removeDeadValues();
    return id;
}

void Rewriter::replaceAllUsesWith(ValueId from, ValueId to, const std::string& reason) {
    EditScope edit(graph_);
    std::vector<NodeId> readers = graph_.value(from).consumers;
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    graph_.replaceAllUsesWith(from, to);
    Change& c = record(ChangeKind::Rewired, readers, reason);
    c.values = {from, to};
}

void Rewriter::bypassNode(NodeId n, size_t inputIndex, size_t outputIndex, const std::string& reason) {
    EditScope edit(graph_);
    Node& node = graph_.node(n);
    ValueId in = node.inputs.at(inputIndex);
    ValueId out = node.outputs.at(outputIndex);
    std::string name = node.displayName();
    std::vector<NodeId> touched;
    if (graph_.value(out).isGraphOutput && !graph_.value(in).isGraphInput && !graph_.value(in).isGraphOutput &&
        !graph_.value(in).initializer && graph_.value(in).producer != kNone) {
        // Keep the graph output's name: the producer of `in` writes `out` directly.
        NodeId p = graph_.value(in).producer;
        touched = {p};
        graph_.eraseNode(n);
        graph_.replaceAllUsesWith(in, out);
        const auto& prodOuts = graph_.node(p).outputs;
        size_t slot = static_cast<size_t>(std::find(prodOuts.begin(), prodOuts.end(), in) - prodOuts.begin());
        graph_.setNodeOutput(p, slot, out);
        TypeInfo t = graph_.value(in).type;
        if (!graph_.value(out).type.known()) graph_.value(out).type = t;
        graph_.removeValue(in);
    } else if (graph_.value(out).isGraphOutput) {
        // Both ends are graph-visible (e.g. input → Identity → output): an output may not be an
        // input of the same graph in every runtime, so keep the node.
        missed({n}, "not removed: " + name + " connects two graph-visible values");
        return;
    } else {
        touched = graph_.value(out).consumers;
        graph_.eraseNode(n);
        graph_.replaceAllUsesWith(out, in);
        graph_.removeValue(out);
    }
    Change& c = record(ChangeKind::Removed, {}, reason);
    c.nodes = {n};
    c.nodeNames = {name};
    c.values = {in};
    c.touched = std::move(touched);
}

void Rewriter::setInput(NodeId n, size_t slot, ValueId v, const std::string& reason) {
    EditScope edit(graph_);
    ValueId old = slot < graph_.node(n).inputs.size() ? graph_.node(n).inputs[slot] : kNone;
    graph_.setNodeInput(n, slot, v);
    Change& c = record(ChangeKind::Rewired, {n}, reason);
    c.values = {old, v};
}

void Rewriter::setAttribute(NodeId n, Attribute a, const std::string& reason) {
    EditScope edit(graph_);
    graph_.node(n).setAttr(std::move(a));
    graph_.noteSubgraphs(n);
    record(ChangeKind::Modified, {n}, reason);
}

bool Rewriter::removeAttribute(NodeId n, const std::string& name, const std::string& reason) {
    EditScope edit(graph_);
    if (!graph_.node(n).removeAttr(name)) return false;
    record(ChangeKind::Modified, {n}, reason);
    return true;
}

void Rewriter::eraseNode(NodeId n, const std::string& reason) {
    EditScope edit(graph_);
    std::string name = graph_.node(n).displayName();
    std::vector<ValueId> outs = graph_.node(n).outputs;
    for (ValueId v : outs)
        if (v != kNone && (!graph_.value(v).consumers.empty() || graph_.value(v).isGraphOutput))
            throw Error(ErrorKind::Internal, "eraseNode: output '" + graph_.value(v).name + "' of " + name + " is still read");
    graph_.eraseNode(n);
    for (ValueId v : outs)
        if (v != kNone) graph_.removeValue(v);
    Change& c = record(ChangeKind::Removed, {}, reason);
    c.nodes = {n};
    c.nodeNames = {name};
}

ValueId Rewriter::foldToConstant(ValueId v, TensorPtr tensor, const std::string& reason) {
    EditScope edit(graph_);
    Value& val = graph_.value(v);
    NodeId producer = val.producer;
    std::string producerName = producer != kNone ? graph_.node(producer).displayName() : std::string();
    std::vector<NodeId> origins = producer != kNone ? originsOf(producer) : std::vector<NodeId>{};
    // The value keeps its id and name; it simply becomes an initializer.
    if (producer != kNone) {
        const auto& outs = graph_.node(producer).outputs;
        graph_.setNodeOutput(producer, static_cast<size_t>(std::find(outs.begin(), outs.end(), v) - outs.begin()), kNone);
    }
    auto t = std::make_shared<Tensor>(*tensor);
    t->name = val.name;
    graph_.setInitializer(v, std::move(t));
    val.type = TypeInfo::tensor(tensor->dtype, Shape{});
    for (int64_t d : tensor->dims) val.type.shape->dims.push_back(Dim::of(d));
    Change& c = record(ChangeKind::Folded, producer != kNone ? std::vector<NodeId>{producer} : std::vector<NodeId>{}, reason);
    c.values = {v};
    c.touched = graph_.value(v).consumers;  // they read a constant now
    c.provenance = origins;
    if (producer != kNone) {
        bool stillUsed = false;
        for (ValueId o : graph_.node(producer).outputs)
            if (o != kNone && (!graph_.value(o).consumers.empty() || graph_.value(o).isGraphOutput)) stillUsed = true;
        if (!stillUsed) {
            std::vector<ValueId> outs = graph_.node(producer).outputs;
            graph_.eraseNode(producer);
            for (ValueId o : outs)
                if (o != kNone) graph_.removeValue(o);
            Change& rm = record(ChangeKind::Removed, {}, "all outputs of " + producerName + " are constants now");
            rm.nodes = {producer};
            rm.nodeNames = {producerName};
        }
    }
    return v;
}

void Rewriter::removeInitializer(ValueId v, const std::string& reason) {
    EditScope edit(graph_);
    Value& val = graph_.value(v);
    if (!val.consumers.empty() || val.isGraphOutput)
        throw Error(ErrorKind::Internal, "removeInitializer: '" + val.name + "' is still read");
    if (val.isGraphInput) {
        std::vector<ValueId> ins;
        for (ValueId i : graph_.inputs())
            if (i != v) ins.push_back(i);
        graph_.setInputs(std::move(ins));
    }
    graph_.setInitializer(v, nullptr);
    graph_.removeValue(v);
    Change& c = record(ChangeKind::Removed, {}, reason);
    c.values = {v};
}

void Rewriter::removeFunction(size_t index, const std::string& reason) {
    std::string name = model_.functions.at(index).name;
    model_.functions.erase(model_.functions.begin() + static_cast<std::ptrdiff_t>(index));
    Change& c = record(ChangeKind::Removed, {}, reason);
    c.nodeNames = {"function " + name};
}

void Rewriter::addFunction(Function f, const std::string& reason) {
    std::string label = "function " + f.domain + "::" + f.name;
    model_.functions.push_back(std::move(f));
    Change& c = record(ChangeKind::Added, {}, reason);
    c.nodeNames = {std::move(label)};
}

void Rewriter::setOpsetImport(const std::string& domain, int64_t version, const std::string& reason) {
    const int64_t before = model_.opsetFor(domain);
    if (before == version) return;
    model_.setOpset(domain, version);
    Change& c = record(before == 0 ? ChangeKind::Added : ChangeKind::Modified, {}, reason);
    c.nodeNames = {"opset import " + (domain.empty() ? std::string("ai.onnx") : domain) + " " + std::to_string(version)};
}

void Rewriter::removeOpsetImport(const std::string& domain, const std::string& reason) {
    auto& ops = model_.opsetImports;
    auto it = std::find_if(ops.begin(), ops.end(), [&](const OpsetImport& o) { return o.domain == domain; });
    if (it == ops.end()) return;
    const int64_t version = it->version;
    ops.erase(it);
    Change& c = record(ChangeKind::Removed, {}, reason);
    c.nodeNames = {"opset import " + (domain.empty() ? std::string("ai.onnx") : domain) + " " + std::to_string(version)};
}

void Rewriter::requireIrVersion(int64_t version, const std::string& reason) {
    if (model_.irVersion >= version) return;
    model_.irVersion = version;
    Change& c = record(ChangeKind::Modified, {}, reason);
    c.nodeNames = {"ir_version " + std::to_string(version)};
}

void Rewriter::restoreTopologicalOrder() {
    EditScope edit(graph_);
    graph_.sortTopologically();
}

bool Rewriter::isCapturedBySubgraph(ValueId v) const {
    const std::string& name = graph_.value(v).name;
    for (NodeId n : graph_.nodesWithSubgraphs()) {
        for (const auto& c : graph_.capturedNames(n))
            if (c == name) return true;
    }
    return false;
}

void Rewriter::removeDeadValues() {
    EditScope edit(graph_);
    auto isDead = [&](ValueId v) {
        if (!graph_.hasValue(v)) return false;
        const Value& val = graph_.value(v);
        return val.producer == kNone && val.consumers.empty() && !val.isGraphInput && !val.isGraphOutput &&
               !val.initializer && !val.isOuterScope;
    };
    std::vector<ValueId> candidates = graph_.takeValuesThatMayHaveDied();
    if (!deadValuesSwept_) {
        // Values already dead before this rewriter's first edit are only found by a full sweep.
        candidates = graph_.valueIds();
        deadValuesSwept_ = true;
    }
    for (ValueId v : candidates)
        if (isDead(v)) graph_.removeValue(v);
}

void Rewriter::remark(RemarkKind kind, const std::vector<NodeId>& nodes, const std::string& message,
                      const std::vector<ValueId>& values) {
    Remark r;
    r.kind = kind;
    r.pass = pass_;
    r.rule = rule_;
    r.graphPath = graphPath_;
    r.nodes = nodes;
    r.nodeNames = namesOf(nodes);
    r.values = values;
    r.message = message;
    remarks_.push_back(std::move(r));
}

void Rewriter::applied(const std::vector<NodeId>& nodes, const std::string& message) {
    remark(RemarkKind::Applied, nodes, message, {});
}

void Rewriter::missed(const std::vector<NodeId>& nodes, const std::string& message, const std::vector<ValueId>& blocking) {
    remark(RemarkKind::Missed, nodes, message, blocking);
}

}  // namespace passlens::passes
