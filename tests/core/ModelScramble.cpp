#include "core/ModelScramble.h"

#include <algorithm>
#include <functional>
#include <random>

namespace passlens::test {

using namespace passlens::ir;

void shuffleTopologically(Graph& g, uint64_t seed) {
    // Kahn's algorithm releasing a random ready node each step: any order it yields is valid.
    std::mt19937_64 rng(seed);
    std::vector<int> pending(g.nodeIdLimit(), 0);
    std::unordered_map<ValueId, std::vector<NodeId>> readers;
    for (NodeId n : g.nodeOrder())
        for (ValueId v : g.readsOf(n))
            if (g.value(v).producer != kNone) {
                ++pending[n];
                readers[v].push_back(n);
            }
    std::vector<NodeId> ready, order;
    for (NodeId n : g.nodeOrder())
        if (pending[n] == 0) ready.push_back(n);
    while (!ready.empty()) {
        const size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
        const NodeId n = ready[pick];
        ready[pick] = ready.back();
        ready.pop_back();
        order.push_back(n);
        for (ValueId v : g.node(n).outputs) {
            if (v == kNone) continue;
            auto it = readers.find(v);
            if (it == readers.end()) continue;
            for (NodeId c : it->second)
                if (--pending[c] == 0) ready.push_back(c);
        }
    }
    for (NodeId n : order) g.moveNodeBefore(n, kNone);
}

namespace {

class Renamer {
public:
    explicit Renamer(uint64_t seed) : seed_(seed) {}

    void renameGraph(Graph& g, bool isMain, std::unordered_map<NodeId, std::string>* truth) {
        std::vector<ValueId> values = g.valueIds();
        for (ValueId v : values) {
            const Value& val = g.value(v);
            if (val.isOuterScope) continue;  // renamed with the enclosing graph's value
            if (isMain && (val.isGraphInput || val.isGraphOutput)) continue;
            const std::string old = val.name, fresh = "s" + std::to_string(seed_ % 997) + "_v" + std::to_string(next_++);
            g.renameValue(v, fresh);
            g.renameCaptures(old, fresh);
        }
        for (NodeId n : g.nodeOrder()) {
            Node& node = g.node(n);
            node.name = "s" + std::to_string(seed_ % 997) + "_n" + std::to_string(next_++);
            if (truth) (*truth)[n] = node.name;
            for (Attribute& a : node.attributes) {
                if (a.g) renameGraph(*a.g, false, nullptr);
                for (auto& sg : a.graphs) renameGraph(*sg, false, nullptr);
            }
        }
        shuffleTopologically(g, seed_ + next_);
    }

private:
    uint64_t seed_;
    size_t next_ = 0;
};

}  // namespace

std::optional<Mutation> removeOneReluAndChangeOneWeight(Model& m) {
    std::vector<Graph*> graphs;
    m.graph.forEachGraph([&](Graph& g) { graphs.push_back(&g); });
    Mutation mut;
    for (size_t k = 0; k < graphs.size() && mut.removedRelu == kNone; ++k)
        for (NodeId n : graphs[k]->nodeOrder()) {
            const Node& node = graphs[k]->node(n);
            if (node.opType == "Relu" && !node.inputs.empty() && !graphs[k]->value(node.outputs[0]).isGraphOutput) {
                mut.removedRelu = n, mut.graphIndex = k;
                break;
            }
        }
    if (mut.removedRelu == kNone) return std::nullopt;
    // The weight: a float tensor of 2+ elements read by exactly one node, not the Relu.
    auto usable = [](const TensorPtr& t) { return t && t->dtype == DataType::Float && t->elementCount() >= 2; };
    auto bumped = [](const Tensor& t) {
        std::vector<float> values(t.as<float>(), t.as<float>() + t.elementCount());
        values[0] += 0.25f;
        return makeTensorOf(DataType::Float, t.dims, values, t.name);
    };
    std::function<void()> applyWeightChange;
    for (size_t k = 0; k < graphs.size() && mut.changedNode == kNone; ++k) {
        Graph& g = *graphs[k];
        auto soleReader = [&](ValueId v) {
            std::vector<NodeId> readers = g.value(v).consumers;
            std::sort(readers.begin(), readers.end());
            readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
            const bool ok = readers.size() == 1 && !g.value(v).isGraphOutput && !(mut.graphIndex == k && readers[0] == mut.removedRelu);
            return ok ? readers[0] : kNone;
        };
        mut.changedGraphIndex = k;
        for (ValueId v : g.initializerOrder())
            if (NodeId reader = soleReader(v); reader != kNone && usable(g.value(v).initializer)) {
                mut.changedNode = reader;
                applyWeightChange = [&g, v, bumped] { g.setInitializer(v, bumped(*g.value(v).initializer)); };
                break;
            }
        if (mut.changedNode != kNone) break;
        for (NodeId n : g.nodeOrder()) {
            Node& c = g.node(n);
            Attribute* value = c.attr("value");
            if (c.opType != "Constant" || !value || !usable(value->t) || soleReader(c.outputs[0]) == kNone) continue;
            mut.changedNode = n;
            applyWeightChange = [value, bumped] { value->t = bumped(*value->t); };
            break;
        }
    }
    if (mut.changedNode == kNone) return std::nullopt;
    applyWeightChange();
    Graph& g = *graphs[mut.graphIndex];
    const ValueId in = g.node(mut.removedRelu).inputs[0], out = g.node(mut.removedRelu).outputs[0];
    g.eraseNode(mut.removedRelu);
    g.replaceAllUsesWith(out, in);
    g.removeValue(out);
    return mut;
}

ScrambledModel scrambleModel(const Model& m, uint64_t seed) {
    ScrambledModel out{m, {}};  // Graph copies are deep, bodies included
    Renamer(seed).renameGraph(out.model.graph, true, &out.newNameOf);
    return out;
}

}  // namespace passlens::test
