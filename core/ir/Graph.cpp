#include "ir/Graph.h"

#include <algorithm>
#include <charconv>
#include <queue>

#include "ir/Error.h"

namespace passlens::ir {

std::optional<std::vector<int64_t>> Value::staticDims() const {
    if (initializer) return initializer->dims;
    if (!type.isTensor() || !type.shape || !type.shape->isStatic()) return std::nullopt;
    return type.shape->staticDims();
}

std::optional<size_t> Value::rank() const {
    if (initializer) return initializer->dims.size();
    if (!type.isTensor() || !type.shape) return std::nullopt;
    return type.shape->rank();
}


namespace {
[[noreturn]] void internalError(const std::string& m) { throw Error(ErrorKind::Internal, m); }

/// A name "P_k" became free: uniqueXName("P") may hand out k again.
void lowerSuffixHint(std::unordered_map<std::string, size_t>& hints, const std::string& freed) {
    if (hints.empty()) return;
    size_t us = freed.rfind('_');
    if (us == std::string::npos || us + 1 == freed.size()) return;
    size_t k = 0;
    auto [end, ec] = std::from_chars(freed.data() + us + 1, freed.data() + freed.size(), k);
    if (ec != std::errc() || end != freed.data() + freed.size()) return;
    auto it = hints.find(freed.substr(0, us));
    if (it != hints.end() && it->second > k) it->second = k;
}

/// The first free "prefix" or "prefix_n" (smallest n), as if probing n = 1, 2, ... every time.
template <class Taken>
std::string firstFreeName(const std::string& prefix, std::unordered_map<std::string, size_t>& hints, Taken taken) {
    if (!taken(prefix)) return prefix;
    size_t& i = hints.try_emplace(prefix, 1).first->second;
    for (;; ++i) {
        std::string c = prefix + "_" + std::to_string(i);
        if (!taken(c)) return c;
    }
}
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
    : name(o.name), docString(o.docString), unknownFields(o.unknownFields), metadataProps(o.metadataProps),
      sparseInitializers(o.sparseInitializers), order_(o.order_), inputs_(o.inputs_),
      outputs_(o.outputs_), initOrder_(o.initOrder_), valueByName_(o.valueByName_),
      nodeNameUses_(o.nodeNameUses_), subgraphHolders_(o.nodesWithSubgraphs()) {
    for (ValueId v : o.valueInfoSeq_)
        if (o.hasValue(v)) valueInfoSeq_.push_back(v);
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
    mayHaveDied_.push_back(v->id);
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
    for (ValueId v : outputs_) {
        value(v).isGraphOutput = false;
        mayHaveDied_.push_back(v);
    }
    outputs_ = std::move(outs);
    for (ValueId v : outputs_) value(v).isGraphOutput = true;
}

void Graph::setInputs(std::vector<ValueId> ins) {
    for (ValueId v : inputs_) {
        value(v).isGraphInput = false;
        mayHaveDied_.push_back(v);
    }
    inputs_ = std::move(ins);
    for (ValueId v : inputs_) value(v).isGraphInput = true;
}

void Graph::setInitializer(ValueId v, TensorPtr tensor) {
    Value& val = value(v);
    bool had = val.initializer != nullptr;
    val.initializer = std::move(tensor);
    if (val.initializer && !had) initOrder_.push_back(v);
    if (!val.initializer && had) {
        initOrder_.erase(std::remove(initOrder_.begin(), initOrder_.end(), v), initOrder_.end());
        mayHaveDied_.push_back(v);
    }
}

void Graph::removeValue(ValueId v) {
    Value& val = value(v);
    if (val.producer != kNone || !val.consumers.empty())
        internalError("removeValue: value '" + val.name + "' is still in use");
    if (val.initializer) setInitializer(v, nullptr);
    if (val.isGraphInput) inputs_.erase(std::remove(inputs_.begin(), inputs_.end(), v), inputs_.end());
    if (val.isGraphOutput) outputs_.erase(std::remove(outputs_.begin(), outputs_.end(), v), outputs_.end());
    auto it = valueByName_.find(val.name);
    if (it != valueByName_.end() && it->second == v) {
        valueByName_.erase(it);
        lowerSuffixHint(valueSuffixHint_, val.name);
    }
    values_[v].reset();
}

Value& Graph::value(ValueId v) {
    if (!hasValue(v)) internalError("no value with id " + std::to_string(v));
    noteLentValue(v);
    return *values_[v];
}
const Value& Graph::value(ValueId v) const {
    if (!hasValue(v)) internalError("no value with id " + std::to_string(v));
    noteLentValue(v);
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
    if (c.empty()) mayHaveDied_.push_back(v);
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
    ++nodeNameUses_[node->name];
    if (node->hasSubgraphs()) subgraphHolders_.push_back(id);
    nodes_.push_back(std::move(node));
    order_.insertBefore(id, order_.contains(before) ? before : kNone);  // an unknown `before` appends
    return id;
}

void Graph::eraseNode(NodeId n) {
    Node& nd = node(n);
    for (ValueId v : nd.inputs) removeConsumer(v, n);
    for (ValueId v : nd.outputs)
        if (v != kNone && hasValue(v) && value(v).producer == n) {
            value(v).producer = kNone;
            mayHaveDied_.push_back(v);
        }
    auto uses = nodeNameUses_.find(nd.name);
    if (uses != nodeNameUses_.end() && --uses->second == 0) {
        nodeNameUses_.erase(uses);
        lowerSuffixHint(nodeSuffixHint_, nd.name);
    }
    order_.erase(n);
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
    if (it != valueByName_.end() && it->second == v) {
        valueByName_.erase(it);
        lowerSuffixHint(valueSuffixHint_, val.name);
    }
    val.name = newName;
    valueByName_[newName] = v;
}

std::vector<NodeId> Graph::nodesWithSubgraphs() const {
    std::vector<NodeId> out;
    for (NodeId n : subgraphHolders_)
        if (hasNode(n) && order_.contains(n) && nodes_[n]->hasSubgraphs()) out.push_back(n);
    std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return precedes(a, b); });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

void Graph::noteSubgraphs(NodeId n) {
    if (node(n).hasSubgraphs()) subgraphHolders_.push_back(n);
}

void Graph::renameCaptures(const std::string& from, const std::string& to) {
    for (NodeId n : nodesWithSubgraphs()) {
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
    if (nd.outputs[slot] != kNone && value(nd.outputs[slot]).producer == n) {
        value(nd.outputs[slot]).producer = kNone;
        mayHaveDied_.push_back(nd.outputs[slot]);
    }
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
        mayHaveDied_.push_back(from);
    }
}

void Graph::moveNodeBefore(NodeId n, NodeId before) {
    node(n);
    if (n == before) return;
    order_.erase(n);
    order_.insertBefore(n, order_.contains(before) ? before : kNone);
}

Node& Graph::node(NodeId n) {
    if (!hasNode(n)) internalError("no node with id " + std::to_string(n));
    noteLentNode(n);
    return *nodes_[n];
}
const Node& Graph::node(NodeId n) const {
    if (!hasNode(n)) internalError("no node with id " + std::to_string(n));
    noteLentNode(n);
    return *nodes_[n];
}

// ---- Graph: reference checks -------------------------------------------------------------------

std::weak_ptr<const void> Graph::beginReferenceChecks() {
    ++lent_.depth;
    if (!lent_.alive) lent_.alive = std::make_shared<const char>('\0');
    return lent_.alive;
}

void Graph::endReferenceChecks() {
    if (lent_.depth > 0 && --lent_.depth == 0) {
        invalidateReferences();
        lent_.nodes.clear();
        lent_.values.clear();
        lent_.nodeLent.clear();
        lent_.valueLent.clear();
    }
}

void Graph::noteLentNode([[maybe_unused]] NodeId n) const {
#if PASSLENS_REFERENCE_CHECKS
    if (lent_.depth == 0) return;
    if (lent_.nodeLent.size() <= n) lent_.nodeLent.resize(nodes_.size() > n ? nodes_.size() : n + 1);
    if (lent_.nodeLent[n]) return;
    lent_.nodeLent[n] = true;
    lent_.nodes.push_back(n);
#endif
}

void Graph::noteLentValue([[maybe_unused]] ValueId v) const {
#if PASSLENS_REFERENCE_CHECKS
    if (lent_.depth == 0) return;
    if (lent_.valueLent.size() <= v) lent_.valueLent.resize(values_.size() > v ? values_.size() : v + 1);
    if (lent_.valueLent[v]) return;
    lent_.valueLent[v] = true;
    lent_.values.push_back(v);
#endif
}

void Graph::invalidateReferences() {
#if PASSLENS_REFERENCE_CHECKS
    // Moving into a fresh allocation frees the old one: AddressSanitizer reports any later read
    // through a reference to it as a heap-use-after-free, with this function in the "freed by" trace.
    for (NodeId n : lent_.nodes) {
        lent_.nodeLent[n] = false;
        if (hasNode(n)) nodes_[n] = std::make_unique<Node>(std::move(*nodes_[n]));
    }
    for (ValueId v : lent_.values) {
        lent_.valueLent[v] = false;
        if (hasValue(v)) values_[v] = std::make_unique<Value>(std::move(*values_[v]));
    }
    lent_.nodes.clear();
    lent_.values.clear();
    // The same for the id lists: a loop still walking the old buffer reads freed memory.
    auto relocate = [](std::vector<ValueId>& ids) { std::vector<ValueId>(ids).swap(ids); };
    if (lent_.lists & kLentOrder) order_.relocateIds();
    if (lent_.lists & kLentInputs) relocate(inputs_);
    if (lent_.lists & kLentOutputs) relocate(outputs_);
    if (lent_.lists & kLentInitializers) relocate(initOrder_);
    lent_.lists = 0;
#endif
}

std::optional<NodeId> Graph::findNode(const std::string& n) const {
    if (!nodeNameUses_.count(n)) return std::nullopt;
    for (NodeId id : nodeOrder())
        if (nodes_[id]->name == n) return id;
    return std::nullopt;
}

std::optional<std::vector<NodeId>> Graph::topologicalOrder() const {
    // Kahn's algorithm, always releasing the earliest node in list order, so a graph that is
    // already sorted keeps its order exactly. Reads through subgraph captures count as edges.
    const std::vector<NodeId>& order = nodeOrder();
    std::vector<uint32_t> position(nodes_.size(), 0);
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<uint32_t>(i);
    // Fast path: passes keep the list sorted, so usually every producer already comes first and
    // the answer is the list itself; checked in one allocation-free sweep over the inputs.
    auto producedEarlier = [&](NodeId n, ValueId v) {
        const NodeId p = values_[v]->producer;
        return p == kNone || position[p] < position[n];
    };
    bool sorted = true;
    for (NodeId n : order) {
        for (ValueId v : nodes_[n]->inputs)
            if (v != kNone && !producedEarlier(n, v)) sorted = false;
        if (sorted && nodes_[n]->hasSubgraphs())
            for (ValueId v : readsOf(n))
                if (!producedEarlier(n, v)) sorted = false;
        if (!sorted) break;
    }
    if (sorted) return order;
    std::vector<int> pending(nodes_.size(), 0);
    std::unordered_map<ValueId, std::vector<NodeId>> readers;
    for (NodeId n : order)
        for (ValueId v : readsOf(n))
            if (values_[v]->producer != kNone) {
                ++pending[n];
                readers[v].push_back(n);
            }
    auto later = [&](NodeId a, NodeId b) { return position[a] > position[b]; };
    std::priority_queue<NodeId, std::vector<NodeId>, decltype(later)> ready(later);
    for (NodeId n : order)
        if (pending[n] == 0) ready.push(n);
    std::vector<NodeId> out;
    out.reserve(order.size());
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
    if (out.size() != order.size()) return std::nullopt;
    return out;
}

std::vector<NodeId> Graph::findCycle() const {
    if (topologicalOrder()) return {};
    // Depth-first along producer links (a node's readsOf), with an explicit stack; meeting a node
    // that is still on the stack closes a cycle, which the stack then spells out.
    enum : uint8_t { kNew, kOnStack, kDone };
    std::vector<uint8_t> state(nodes_.size(), kNew);
    struct Frame {
        NodeId node;
        std::vector<ValueId> reads;
        size_t next = 0;
    };
    std::vector<Frame> stack;
    for (NodeId root = firstNode(); root != kNone; root = nextNode(root)) {
        if (state[root] != kNew) continue;
        state[root] = kOnStack;
        stack.push_back({root, readsOf(root)});
        while (!stack.empty()) {
            Frame& top = stack.back();
            if (top.next == top.reads.size()) {
                state[top.node] = kDone;
                stack.pop_back();
                continue;
            }
            NodeId p = values_[top.reads[top.next++]]->producer;
            if (p == kNone || state[p] == kDone) continue;
            if (state[p] == kOnStack) {
                // The stack runs reader → producer; a cycle in dataflow order runs the other way.
                std::vector<NodeId> cycle;
                for (size_t i = stack.size(); i-- > 0;) {
                    cycle.push_back(stack[i].node);
                    if (stack[i].node == p) break;
                }
                std::rotate(cycle.begin(), cycle.end() - 1, cycle.end());
                return cycle;
            }
            state[p] = kOnStack;
            stack.push_back({p, readsOf(p)});
        }
    }
    return {};
}

std::optional<NodeId> Graph::nodeOnCycle() const {
    std::vector<NodeId> cycle = findCycle();
    if (cycle.empty()) return std::nullopt;
    return cycle.front();
}

std::string Graph::describeCycle(const std::vector<NodeId>& cycle, size_t limit) const {
    std::string out;
    for (size_t i = 0; i < cycle.size() && i < limit; ++i) out += (i ? " -> " : "") + node(cycle[i]).displayName();
    if (cycle.size() > limit) out += " -> ...";
    if (!cycle.empty()) out += " -> " + node(cycle.front()).displayName();
    return out;
}

void Graph::sortTopologically() {
    auto sorted = topologicalOrder();
    if (!sorted) {
        std::vector<NodeId> cycle = findCycle();
        throwBadInput("graph '" + name + "' has a cycle through node '" +
                      (cycle.empty() ? std::string("?") : node(cycle.front()).displayName()) + "' (" +
                      describeCycle(cycle) + ")");
    }
    order_.assign(*sorted);
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
    // Only the tracked subgraph holders, not every node: passes call this several times each.
    for (NodeId n : nodesWithSubgraphs())
        for (auto& a : nodes_[n]->attributes) {
            if (a.g) a.g->forEachGraph(f);
            for (auto& sg : a.graphs) sg->forEachGraph(f);
        }
}

void Graph::forEachGraph(const std::function<void(const Graph&)>& f) const {
    f(*this);
    for (NodeId n : nodesWithSubgraphs())
        for (const auto& a : nodes_[n]->attributes) {
            if (a.g) std::as_const(*a.g).forEachGraph(f);
            for (const auto& sg : a.graphs) std::as_const(*sg).forEachGraph(f);
        }
}

std::string Graph::uniqueValueName(const std::string& prefix) const {
    return firstFreeName(prefix, valueSuffixHint_, [&](const std::string& c) { return valueByName_.count(c) > 0; });
}

std::string Graph::uniqueNodeName(const std::string& prefix) const {
    return firstFreeName(prefix, nodeSuffixHint_, [&](const std::string& c) { return nodeNameUses_.count(c) > 0; });
}

}  // namespace passlens::ir
