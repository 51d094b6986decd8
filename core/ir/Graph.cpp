#include "ir/Graph.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

#include "ir/Error.h"

namespace passlens::ir {

namespace {
[[noreturn]] void internalError(const std::string& m) { throw Error(ErrorKind::Internal, m); }
}  // namespace

// ---- Node ------------------------------------------------------------------------------------

const Attribute* Node::attr(std::string_view n) const {
    for (const auto& a : attributes)
        if (a.name == n) return &a;
    return nullptr;
}
Attribute* Node::attr(std::string_view n) {
    for (auto& a : attributes)
        if (a.name == n) return &a;
    return nullptr;
}
int64_t Node::attrInt(std::string_view n, int64_t dflt) const {
    const Attribute* a = attr(n);
    return a && a->kind == AttrKind::Int ? a->i : dflt;
}
float Node::attrFloat(std::string_view n, float dflt) const {
    const Attribute* a = attr(n);
    return a && a->kind == AttrKind::Float ? a->f : dflt;
}
std::string Node::attrString(std::string_view n, const std::string& dflt) const {
    const Attribute* a = attr(n);
    return a && a->kind == AttrKind::String ? a->s : dflt;
}
std::vector<int64_t> Node::attrInts(std::string_view n, std::vector<int64_t> dflt) const {
    const Attribute* a = attr(n);
    return a && a->kind == AttrKind::Ints ? a->ints : dflt;
}
void Node::setAttr(Attribute a) {
    if (Attribute* existing = attr(a.name)) *existing = std::move(a);
    else attributes.push_back(std::move(a));
}
bool Node::removeAttr(std::string_view n) {
    auto it = std::find_if(attributes.begin(), attributes.end(), [&](const Attribute& a) { return a.name == n; });
    if (it == attributes.end()) return false;
    attributes.erase(it);
    return true;
}
bool Node::hasSubgraphs() const {
    for (const auto& a : attributes)
        if (a.kind == AttrKind::Graph || a.kind == AttrKind::Graphs) return true;
    return false;
}
std::string Node::displayName() const {
    return name.empty() ? opType + "#" + std::to_string(id) : name;
}

// ---- Graph: copy -------------------------------------------------------------------------------

std::shared_ptr<Graph> cloneGraph(const Graph& g) { return std::make_shared<Graph>(g); }

static void deepCopySubgraphs(Node& n) {
    for (auto& a : n.attributes) {
        if (a.g) a.g = cloneGraph(*a.g);
        for (auto& sg : a.graphs) sg = cloneGraph(*sg);
    }
}

Graph::Graph(const Graph& o)
    : name(o.name), docString(o.docString), metadataProps(o.metadataProps),
      sparseInitializers(o.sparseInitializers), order_(o.order_), inputs_(o.inputs_),
      outputs_(o.outputs_), initOrder_(o.initOrder_), valueByName_(o.valueByName_),
      valueInfoSeq_(o.valueInfoSeq_) {
    nodes_.reserve(o.nodes_.size());
    for (const auto& n : o.nodes_) {
        if (!n) { nodes_.emplace_back(); continue; }
        auto copy = std::make_unique<Node>(*n);
        deepCopySubgraphs(*copy);
        nodes_.push_back(std::move(copy));
    }
    values_.reserve(o.values_.size());
    for (const auto& v : o.values_) values_.push_back(v ? std::make_unique<Value>(*v) : nullptr);
}

Graph& Graph::operator=(const Graph& o) {
    if (this != &o) {
        Graph tmp(o);
        *this = std::move(tmp);
    }
    return *this;
}

// ---- Graph: values -----------------------------------------------------------------------------

ValueId Graph::addValue(std::string n, TypeInfo type) {
    if (!n.empty() && valueByName_.count(n)) throwBadInput("duplicate value name '" + n + "'");
    auto v = std::make_unique<Value>();
    v->id = static_cast<ValueId>(values_.size());
    v->name = std::move(n);
    v->type = std::move(type);
    if (!v->name.empty()) valueByName_[v->name] = v->id;
    values_.push_back(std::move(v));
    return values_.back()->id;
}

ValueId Graph::addOuterScopeValue(std::string n) {
    ValueId v = addValue(std::move(n));
    values_[v]->isOuterScope = true;
    return v;
}

ValueId Graph::addInitializer(std::string n, TensorPtr tensor) {
    TypeInfo t = TypeInfo::tensor(tensor->dtype);
    Shape s;
    for (int64_t d : tensor->dims) s.dims.push_back(Dim::of(d));
    t.shape = s;
    ValueId v = addValue(std::move(n), t);
    setInitializer(v, std::move(tensor));
    return v;
}

ValueId Graph::addInput(std::string n, TypeInfo type) {
    ValueId v = addValue(std::move(n), std::move(type));
    values_[v]->isGraphInput = true;
    inputs_.push_back(v);
    return v;
}

void Graph::markOutput(ValueId v) {
    value(v).isGraphOutput = true;
    outputs_.push_back(v);
}

void Graph::setOutputs(std::vector<ValueId> outs) {
    for (ValueId v : outputs_) value(v).isGraphOutput = false;
    outputs_ = std::move(outs);
    for (ValueId v : outputs_) value(v).isGraphOutput = true;
}

void Graph::setInputs(std::vector<ValueId> ins) {
    for (ValueId v : inputs_) value(v).isGraphInput = false;
    inputs_ = std::move(ins);
    for (ValueId v : inputs_) value(v).isGraphInput = true;
}

void Graph::setInitializer(ValueId v, TensorPtr tensor) {
    Value& val = value(v);
    bool had = val.initializer != nullptr;
    val.initializer = std::move(tensor);
    if (val.initializer && !had) initOrder_.push_back(v);
    if (!val.initializer && had) initOrder_.erase(std::remove(initOrder_.begin(), initOrder_.end(), v), initOrder_.end());
}

void Graph::removeValue(ValueId v) {
    Value& val = value(v);
    if (val.producer != kNone || !val.consumers.empty())
        internalError("removeValue: value '" + val.name + "' is still in use");
    if (val.initializer) setInitializer(v, nullptr);
    if (val.isGraphInput) inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
    if (val.isGraphOutput) outputs_.erase(std::remove(outputs_.begin(), outputs_.end(), v), outputs_.end());
    valueInfoSeq_.erase(std::remove(valueInfoSeq_.begin(), valueInfoSeq_.end(), v), valueInfoSeq_.end());
    auto it = valueByName_.find(val.name);
    if (it != valueByName_.end() && it->second == v) valueByName_.erase(it);
    values_[v].reset();
}

Value& Graph::value(ValueId v) {
    if (!hasValue(v)) internalError("no value with id " + std::to_string(v));
    return *values_[v];
}
const Value& Graph::value(ValueId v) const {
    if (!hasValue(v)) internalError("no value with id " + std::to_string(v));
    return *values_[v];
}

std::optional<ValueId> Graph::findValue(const std::string& n) const {
    auto it = valueByName_.find(n);
    if (it == valueByName_.end()) return std::nullopt;
    return it->second;
}

void Graph::noteValueInfo(ValueId v) {
    Value& val = value(v);
    if (!val.hasValueInfo) {
        val.hasValueInfo = true;
        valueInfoSeq_.push_back(v);
    }
}

std::vector<ValueId> Graph::valueInfoOrder() const {
    std::vector<ValueId> out;
    for (ValueId v : valueInfoSeq_)
        if (hasValue(v)) out.push_back(v);
    return out;
}

std::vector<ValueId> Graph::valueIds() const {
    std::vector<ValueId> out;
    for (const auto& v : values_)
        if (v) out.push_back(v->id);
    return out;
}

// ---- Graph: nodes ------------------------------------------------------------------------------

void Graph::addConsumer(ValueId v, NodeId n) {
    if (v != kNone) value(v).consumers.push_back(n);
}

void Graph::removeConsumer(ValueId v, NodeId n) {
    if (v == kNone) return;
    auto& c = value(v).consumers;
    auto it = std::find(c.begin(), c.end(), n);
    if (it != c.end()) c.erase(it);
}

NodeId Graph::addNode(std::string opType, std::vector<ValueId> ins, std::vector<ValueId> outs,
                      std::vector<Attribute> attributes, std::string nodeName, std::string domain, NodeId before) {
    auto node = std::make_unique<Node>();
    node->id = static_cast<NodeId>(nodes_.size());
    node->opType = std::move(opType);
    node->name = std::move(nodeName);
    node->domain = std::move(domain);
    node->attributes = std::move(attributes);
    node->inputs = std::move(ins);
    node->outputs = std::move(outs);
    NodeId id = node->id;
    for (ValueId v : node->outputs) {
        if (v == kNone) continue;
        Value& val = value(v);
        if (val.producer != kNone)
            throwBadInput("value '" + val.name + "' is produced by both node '" + nodes_[val.producer]->displayName() +
                          "' and node '" + (node->name.empty() ? node->opType : node->name) + "'");
        val.producer = id;
    }
    for (ValueId v : node->inputs) addConsumer(v, id);
    nodes_.push_back(std::move(node));
    if (before == kNone) order_.push_back(id);
    else order_.insert(std::find(order_.begin(), order_.end(), before), id);
    return id;
}

void Graph::eraseNode(NodeId n) {
    Node& nd = node(n);
    for (ValueId v : nd.inputs) removeConsumer(v, n);
    for (ValueId v : nd.outputs)
        if (v != kNone && hasValue(v) && value(v).producer == n) value(v).producer = kNone;
    order_.erase(std::remove(order_.begin(), order_.end(), n), order_.end());
    nodes_[n].reset();
}

void Graph::setNodeInput(NodeId n, size_t slot, ValueId v) {
    Node& nd = node(n);
    if (slot >= nd.inputs.size()) nd.inputs.resize(slot + 1, kNone);
    removeConsumer(nd.inputs[slot], n);
    nd.inputs[slot] = v;
    addConsumer(v, n);
}

void Graph::setNodeInputs(NodeId n, std::vector<ValueId> ins) {
    Node& nd = node(n);
    for (ValueId v : nd.inputs) removeConsumer(v, n);
    nd.inputs = std::move(ins);
    for (ValueId v : nd.inputs) addConsumer(v, n);
}

void Graph::renameValue(ValueId v, const std::string& newName) {
    Value& val = value(v);
    if (val.name == newName) return;
    if (valueByName_.count(newName)) internalError("renameValue: '" + newName + "' already exists");
    auto it = valueByName_.find(val.name);
    if (it != valueByName_.end() && it->second == v) valueByName_.erase(it);
    val.name = newName;
    valueByName_[newName] = v;
}

void Graph::renameCaptures(const std::string& from, const std::string& to) {
    for (NodeId n : order_) {
        if (!nodes_[n]->hasSubgraphs()) continue;
        auto visit = [&](Graph& sg) {
            auto v = sg.findValue(from);
            if (!v) {
                sg.renameCaptures(from, to);
                return;
            }
            if (!sg.value(*v).isOuterScope) return;  // the subgraph defines its own value of that name
            if (auto w = sg.findValue(to)) {
                sg.replaceAllUsesWith(*v, *w);
                if (sg.value(*v).consumers.empty() && !sg.value(*v).isGraphOutput) sg.removeValue(*v);
            } else {
                sg.renameValue(*v, to);
            }
            sg.renameCaptures(from, to);
        };
        for (auto& a : nodes_[n]->attributes) {
            if (a.g) visit(*a.g);
            for (auto& sg : a.graphs) visit(*sg);
        }
    }
}

void Graph::setNodeOutput(NodeId n, size_t slot, ValueId v) {
    Node& nd = node(n);
    if (slot >= nd.outputs.size()) nd.outputs.resize(slot + 1, kNone);
    if (nd.outputs[slot] != kNone && value(nd.outputs[slot]).producer == n) value(nd.outputs[slot]).producer = kNone;
    if (v != kNone) {
        if (value(v).producer != kNone && value(v).producer != n)
            internalError("setNodeOutput: value '" + value(v).name + "' already has a producer");
        value(v).producer = n;
    }
    nd.outputs[slot] = v;
}

void Graph::replaceAllUsesWith(ValueId from, ValueId to) {
    if (from == to) return;
    std::vector<NodeId> users = value(from).consumers;
    std::sort(users.begin(), users.end());
    users.erase(std::unique(users.begin(), users.end()), users.end());
    for (NodeId u : users) {
        Node& nd = node(u);
        for (size_t i = 0; i < nd.inputs.size(); ++i)
            if (nd.inputs[i] == from) setNodeInput(u, i, to);
    }
    if (value(from).name != value(to).name) renameCaptures(value(from).name, value(to).name);
    if (value(from).isGraphOutput) {
        for (ValueId& o : outputs_)
            if (o == from) o = to;
        value(from).isGraphOutput = false;
        value(to).isGraphOutput = true;
    }
}

void Graph::moveNodeBefore(NodeId n, NodeId before) {
    order_.erase(std::remove(order_.begin(), order_.end(), n), order_.end());
    auto it = before == kNone ? order_.end() : std::find(order_.begin(), order_.end(), before);
    order_.insert(it, n);
}

Node& Graph::node(NodeId n) {
    if (!hasNode(n)) internalError("no node with id " + std::to_string(n));
    return *nodes_[n];
}
const Node& Graph::node(NodeId n) const {
    if (!hasNode(n)) internalError("no node with id " + std::to_string(n));
    return *nodes_[n];
}

std::optional<NodeId> Graph::findNode(const std::string& n) const {
    for (NodeId id : order_)
        if (nodes_[id]->name == n) return id;
    return std::nullopt;
}

std::optional<std::vector<NodeId>> Graph::topologicalOrder() const {
    // Kahn's algorithm, always releasing the earliest node in list order, so a graph that is
    // already sorted keeps its order exactly. Reads through subgraph captures count as edges.
    std::vector<uint32_t> position(nodes_.size(), 0);
    for (size_t i = 0; i < order_.size(); ++i) position[order_[i]] = static_cast<uint32_t>(i);
    std::vector<int> pending(nodes_.size(), 0);
    std::unordered_map<ValueId, std::vector<NodeId>> readers;
    for (NodeId n : order_)
        for (ValueId v : readsOf(n))
            if (values_[v]->producer != kNone) {
                ++pending[n];
                readers[v].push_back(n);
            }
    auto later = [&](NodeId a, NodeId b) { return position[a] > position[b]; };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
    for (NodeId n : order_)
        if (pending[n] == 0) ready.push(n);
    std::vector<NodeId> out;
    out.reserve(order_.size());
    while (!ready.empty()) {
        NodeId n = ready.top();
        ready.pop();
        out.push_back(n);
        for (ValueId v : nodes_[n]->outputs) {
            if (v == kNone) continue;
            auto it = readers.find(v);
            if (it == readers.end()) continue;
            for (NodeId c : it->second)
                if (--pending[c] == 0) ready.push(c);
        }
    }
    if (out.size() != order_.size()) return std::nullopt;
    return out;
}

std::optional<NodeId> Graph::nodeOnCycle() const {
    if (topologicalOrder()) return std::nullopt;
    // Walk producer links backwards until a node repeats; iterative, a cycle may be 100k nodes long.
    std::vector<int> state(nodes_.size(), 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::pair<NodeId, std::vector<ValueId>>> stack;  // (node, reads not yet followed)
    for (NodeId root : order_) {
        if (state[root] != 0) continue;
        state[root] = 1;
        stack.push_back({root, readsOf(root)});
        while (!stack.empty()) {
            auto& [n, reads] = stack.back();
            if (reads.empty()) {
                state[n] = 2;
                stack.pop_back();
                continue;
            }
            NodeId p = values_[reads.back()]->producer;
            reads.pop_back();
            if (p == kNone) continue;
            if (state[p] == 1) return p;
            if (state[p] == 0) {
                state[p] = 1;
                stack.push_back({p, readsOf(p)});
            }
        }
    }
    return std::nullopt;
}

void Graph::sortTopologically() {
    auto sorted = topologicalOrder();
    if (!sorted) {
        auto n = nodeOnCycle();
        throwBadInput("graph '" + name + "' has a cycle through node '" +
                      (n ? nodes_[*n]->displayName() : std::string("?")) + "'");
    }
    order_ = std::move(*sorted);
}

// ---- Graph: subgraphs ----------------------------------------------------------------------------

static void collectCaptures(const Graph& g, std::vector<std::string>& out) {
    for (ValueId v : g.valueIds()) {
        const Value& val = g.value(v);
        if (val.isOuterScope && !val.consumers.empty()) out.push_back(val.name);
    }
    for (NodeId n : g.nodeOrder())
        for (const auto& a : g.node(n).attributes) {
            // Captures of nested subgraphs that the middle graph does not define pass through.
            auto passThrough = [&](const Graph& sub) {
                std::vector<std::string> inner;
                collectCaptures(sub, inner);
                for (auto& name : inner) {
                    auto id = g.findValue(name);
                    if (!id || g.value(*id).isOuterScope) out.push_back(name);
                }
            };
            if (a.g) passThrough(*a.g);
            for (const auto& sg : a.graphs) passThrough(*sg);
        }
}

std::vector<std::string> Graph::capturedNames(NodeId n) const {
    std::vector<std::string> out;
    for (const auto& a : node(n).attributes) {
        if (a.g) collectCaptures(*a.g, out);
        for (const auto& sg : a.graphs) collectCaptures(*sg, out);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<ValueId> Graph::readsOf(NodeId n) const {
    std::vector<ValueId> out;
    for (ValueId v : node(n).inputs)
        if (v != kNone) out.push_back(v);
    if (node(n).hasSubgraphs())
        for (const auto& name : capturedNames(n))
            if (auto v = findValue(name)) out.push_back(*v);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void Graph::forEachGraph(const std::function<void(Graph&)>& f) {
    f(*this);
    for (NodeId n : order_)
        for (auto& a : nodes_[n]->attributes) {
            if (a.g) a.g->forEachGraph(f);
            for (auto& sg : a.graphs) sg->forEachGraph(f);
        }
}

void Graph::forEachGraph(const std::function<void(const Graph&)>& f) const {
    f(*this);
    for (NodeId n : order_)
        for (const auto& a : nodes_[n]->attributes) {
            if (a.g) std::as_const(*a.g).forEachGraph(f);
            for (const auto& sg : a.graphs) std::as_const(*sg).forEachGraph(f);
        }
}

std::string Graph::uniqueValueName(const std::string& prefix) const {
    if (!valueByName_.count(prefix)) return prefix;
    for (size_t i = 1;; ++i) {
        std::string c = prefix + "_" + std::to_string(i);
        if (!valueByName_.count(c)) return c;
    }
}

std::string Graph::uniqueNodeName(const std::string& prefix) const {
    std::unordered_set<std::string> names;
    for (NodeId n : order_) names.insert(nodes_[n]->name);
    if (!names.count(prefix)) return prefix;
    for (size_t i = 1;; ++i) {
        std::string c = prefix + "_" + std::to_string(i);
        if (!names.count(c)) return c;
    }
}

}  // namespace passlens::ir
