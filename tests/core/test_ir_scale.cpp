// The graph IR at scale (issue #14): random edit sequences on random DAGs keep the invariants
// (stable ids, exact use lists, list order = a reference list, topological) and end equal to a
// graph rebuilt from scratch; unique names equal a naive probe; cycles are found and named
// without recursion on 50k-node chains; order labels survive dense inserts at one spot.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "ir/Error.h"
#include "ir/Graph.h"
#include "ir/NodeList.h"
#include "ir/Printer.h"

using namespace passlens::ir;

namespace {

/// What the test believes the graph is: nodes by id, in list order.
struct Reference {
    struct Node {
        std::string name;
        std::vector<ValueId> inputs, outputs;
    };
    std::map<NodeId, Node> nodes;
    std::vector<NodeId> order;

    size_t positionOf(NodeId n) const { return static_cast<size_t>(std::find(order.begin(), order.end(), n) - order.begin()); }
    /// List position of v's producer (-1 for a graph input).
    long producerPos(const Graph& g, ValueId v) const {
        NodeId p = g.value(v).producer;
        return p == kNone ? -1 : static_cast<long>(positionOf(p));
    }
};

/// The first free name probing prefix, prefix_1, prefix_2, ... over a plain set.
std::string naiveUnique(const std::set<std::string>& taken, const std::string& prefix) {
    if (!taken.count(prefix)) return prefix;
    for (size_t i = 1;; ++i)
        if (!taken.count(prefix + "_" + std::to_string(i))) return prefix + "_" + std::to_string(i);
}

class Fuzzer {
public:
    explicit Fuzzer(uint32_t seed) : rng_(seed) {}

    void build(size_t nodes) {
        for (int i = 0; i < 3; ++i) inputs_.push_back(g_.addInput("x" + std::to_string(i), TypeInfo::tensor(DataType::Float)));
        for (size_t i = 0; i < nodes; ++i) insert(kNone);
        g_.markOutput(g_.node(ref_.order.back()).outputs[0]);
    }

    void edit() {
        switch (pick(6)) {
        case 0: insert(randomNode()); break;
        case 1: insert(kNone); break;
        case 2: eraseUnread(); break;
        case 3: rewire(); break;
        case 4: move(); break;
        case 5: bypass(); break;
        }
    }

    void checkInvariants() {
        ASSERT_EQ(g_.nodeOrder(), ref_.order);
        ASSERT_EQ(g_.nodeCount(), ref_.order.size());
        std::vector<NodeId> walked;
        for (NodeId n = g_.firstNode(); n != kNone; n = g_.nextNode(n)) walked.push_back(n);
        ASSERT_EQ(walked, ref_.order);
        for (size_t i = 0; i + 1 < ref_.order.size(); ++i) {
            ASSERT_TRUE(g_.precedes(ref_.order[i], ref_.order[i + 1]));
            ASSERT_FALSE(g_.precedes(ref_.order[i + 1], ref_.order[i]));
            ASSERT_EQ(g_.prevNode(ref_.order[i + 1]), ref_.order[i]);
        }
        // Stable ids: every live node is the one the reference knows under that id.
        for (NodeId id = 0; id < g_.nodeIdLimit(); ++id) {
            auto it = ref_.nodes.find(id);
            ASSERT_EQ(g_.hasNode(id), it != ref_.nodes.end()) << id;
            if (it == ref_.nodes.end()) continue;
            ASSERT_EQ(g_.node(id).name, it->second.name);
            ASSERT_EQ(g_.node(id).inputs, it->second.inputs);
            ASSERT_EQ(g_.node(id).outputs, it->second.outputs);
        }
        // Use lists are exactly the input slots that read each value; producers match.
        std::map<ValueId, std::multiset<NodeId>> readers;
        std::map<ValueId, NodeId> producer;
        for (const auto& [id, n] : ref_.nodes) {
            for (ValueId v : n.inputs) readers[v].insert(id);
            for (ValueId v : n.outputs) producer[v] = id;
        }
        for (ValueId v : g_.valueIds()) {
            const auto& c = g_.value(v).consumers;
            ASSERT_EQ(std::multiset<NodeId>(c.begin(), c.end()), readers[v]) << g_.value(v).name;
            ASSERT_EQ(g_.value(v).producer, producer.count(v) ? producer[v] : kNone) << g_.value(v).name;
        }
        // Topological: the list order is a valid schedule, so the stable sort keeps it.
        auto topo = g_.topologicalOrder();
        ASSERT_TRUE(topo);
        ASSERT_EQ(*topo, ref_.order);
        // Unique names equal a naive probe over every current name.
        std::set<std::string> nodeNames, valueNames;
        for (const auto& [id, n] : ref_.nodes) nodeNames.insert(n.name);
        for (ValueId v : g_.valueIds()) valueNames.insert(g_.value(v).name);
        for (const char* prefix : {"n", "v", "n_3", "fresh"}) {
            ASSERT_EQ(g_.uniqueNodeName(prefix), naiveUnique(nodeNames, prefix));
            ASSERT_EQ(g_.uniqueValueName(prefix), naiveUnique(valueNames, prefix));
        }
    }

    /// A graph built from nothing with the reference's nodes in its order and the same names.
    std::string rebuiltText() const {
        Graph r;
        r.name = g_.name;
        for (ValueId v : inputs_) r.addInput(g_.value(v).name, g_.value(v).type);
        auto valueIn = [&](ValueId v) {
            const std::string& name = g_.value(v).name;
            if (auto found = r.findValue(name)) return *found;
            return r.addValue(name);
        };
        for (NodeId id : ref_.order) {
            const auto& n = ref_.nodes.at(id);
            std::vector<ValueId> ins, outs;
            for (ValueId v : n.inputs) ins.push_back(valueIn(v));
            for (ValueId v : n.outputs) outs.push_back(valueIn(v));
            r.addNode(g_.node(id).opType, ins, outs, {}, n.name);
        }
        for (ValueId v : g_.outputs()) r.markOutput(valueIn(v));
        return printGraph(r);
    }

    Graph& graph() { return g_; }

private:
    size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
    NodeId randomNode() { return ref_.order.empty() ? kNone : ref_.order[pick(ref_.order.size())]; }

    /// Values defined before list position `pos` (graph inputs and outputs of earlier nodes).
    std::vector<ValueId> definedBefore(size_t pos) const {
        std::vector<ValueId> out = inputs_;
        for (size_t i = 0; i < pos && i < ref_.order.size(); ++i)
            for (ValueId v : ref_.nodes.at(ref_.order[i]).outputs) out.push_back(v);
        return out;
    }

    void insert(NodeId before) {
        const size_t pos = before == kNone ? ref_.order.size() : ref_.positionOf(before);
        const auto avail = definedBefore(pos);
        std::vector<ValueId> ins;
        for (size_t k = 1 + pick(3); k-- > 0;) ins.push_back(avail[pick(avail.size())]);
        std::vector<ValueId> outs;
        for (size_t k = 1 + pick(2); k-- > 0;) outs.push_back(g_.addValue(g_.uniqueValueName("v")));
        // Names drawn from a few prefixes, so suffix probing and freed names get exercised.
        const std::string name = g_.uniqueNodeName(pick(2) ? "n" : "n_3");
        NodeId id = g_.addNode(pick(2) ? "Add" : "Relu", ins, outs, {}, name, "", before);
        ref_.nodes[id] = {name, ins, outs};
        ref_.order.insert(ref_.order.begin() + static_cast<std::ptrdiff_t>(pos), id);
    }

    bool unread(NodeId id) const {
        for (ValueId v : ref_.nodes.at(id).outputs)
            if (!g_.value(v).consumers.empty() || g_.value(v).isGraphOutput) return false;
        return true;
    }

    void eraseUnread() {
        std::vector<NodeId> cands;
        for (NodeId id : ref_.order)
            if (unread(id)) cands.push_back(id);
        if (cands.empty()) return;
        NodeId id = cands[pick(cands.size())];
        auto outs = ref_.nodes.at(id).outputs;
        g_.eraseNode(id);
        for (ValueId v : outs) g_.removeValue(v);
        ref_.nodes.erase(id);
        ref_.order.erase(std::find(ref_.order.begin(), ref_.order.end(), id));
    }

    void rewire() {
        NodeId id = randomNode();
        if (id == kNone) return;
        const auto avail = definedBefore(ref_.positionOf(id));
        size_t slot = pick(ref_.nodes.at(id).inputs.size());
        ValueId v = avail[pick(avail.size())];
        g_.setNodeInput(id, slot, v);
        ref_.nodes.at(id).inputs[slot] = v;
    }

    /// Moves a node anywhere between its last producer and its first reader.
    void move() {
        NodeId id = randomNode();
        if (id == kNone) return;
        long lo = -1;
        for (ValueId v : ref_.nodes.at(id).inputs) lo = std::max(lo, ref_.producerPos(g_, v));
        size_t hi = ref_.order.size();
        for (ValueId v : ref_.nodes.at(id).outputs)
            for (NodeId c : g_.value(v).consumers) hi = std::min(hi, ref_.positionOf(c));
        // Target slot in [lo + 1, hi]: "before the node now at that slot" (or the end).
        size_t target = static_cast<size_t>(lo + 1) + pick(hi - static_cast<size_t>(lo + 1) + 1);
        NodeId before = target < ref_.order.size() ? ref_.order[target] : kNone;
        if (before == id) return;
        g_.moveNodeBefore(id, before);
        ref_.order.erase(std::find(ref_.order.begin(), ref_.order.end(), id));
        auto at = before == kNone ? ref_.order.end() : std::find(ref_.order.begin(), ref_.order.end(), before);
        ref_.order.insert(at, id);
    }

    /// Readers of a node's first output read its first input instead; the node goes if unread.
    void bypass() {
        NodeId id = randomNode();
        if (id == kNone) return;
        ValueId out = ref_.nodes.at(id).outputs[0], in = ref_.nodes.at(id).inputs[0];
        if (g_.value(out).isGraphOutput) return;
        for (NodeId c : std::vector<NodeId>(g_.value(out).consumers))
            for (auto& v : ref_.nodes.at(c).inputs)
                if (v == out) v = in;
        g_.replaceAllUsesWith(out, in);
        if (unread(id)) {
            auto outs = ref_.nodes.at(id).outputs;
            g_.eraseNode(id);
            for (ValueId v : outs) g_.removeValue(v);
            ref_.nodes.erase(id);
            ref_.order.erase(std::find(ref_.order.begin(), ref_.order.end(), id));
        }
    }

    std::mt19937 rng_;
    Graph g_;
    Reference ref_;
    std::vector<ValueId> inputs_;
};

/// A chain x -> n0 -> n1 -> ... of `length` Relu nodes, added last-to-first (so the list order is
/// the reverse of the dataflow), optionally closed into a cycle.
Graph reversedChain(size_t length, bool closeCycle) {
    Graph g;
    g.name = "chain";
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float));
    std::vector<ValueId> v{x};
    for (size_t i = 0; i < length; ++i) v.push_back(g.addValue("v" + std::to_string(i)));
    for (size_t i = length; i-- > 0;)
        g.addNode("Relu", {i == 0 && closeCycle ? v[length] : v[i]}, {v[i + 1]}, {}, "n" + std::to_string(i));
    g.markOutput(v[length]);
    return g;
}

}  // namespace

TEST(IRScale, RandomEditSequencesKeepTheInvariants) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        Fuzzer f(seed);
        f.build(60);
        f.checkInvariants();
        for (int step = 0; step < 400; ++step) {
            f.edit();
            if (step % 7 == 0) f.checkInvariants();
            if (testing::Test::HasFatalFailure()) return;
        }
        f.checkInvariants();
        EXPECT_EQ(printGraph(f.graph()), f.rebuiltText());
    }
}

TEST(IRScale, CopiesOfAnEditedGraphKeepOrderAndStayIndependent) {
    Fuzzer f(42);
    f.build(40);
    for (int i = 0; i < 100; ++i) f.edit();
    Graph copy = f.graph();
    EXPECT_EQ(copy.nodeOrder(), f.graph().nodeOrder());
    EXPECT_EQ(printGraph(copy), printGraph(f.graph()));
    const NodeId first = copy.firstNode();
    copy.moveNodeBefore(copy.lastNode(), kNone);  // no-op move of the last node
    copy.addNode("Relu", {copy.inputs()[0]}, {copy.addValue("only_in_copy")}, {}, "extra", "", first);
    EXPECT_EQ(copy.nodeOrder().front(), copy.nodeIdLimit() - 1);
    EXPECT_NE(f.graph().nodeOrder().front(), copy.nodeOrder().front());
    EXPECT_FALSE(f.graph().findValue("only_in_copy"));
}

TEST(IRScale, UniqueNamesReuseAFreedSuffix) {
    Graph g;
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float));
    std::vector<NodeId> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(g.addNode("Relu", {x}, {g.addValue(g.uniqueValueName("y"))}, {}, g.uniqueNodeName("r")));
    EXPECT_EQ(g.node(ids[4]).name, "r_4");
    EXPECT_EQ(g.uniqueNodeName("r"), "r_5");
    const ValueId y2 = g.node(ids[2]).outputs[0];
    g.eraseNode(ids[2]);  // frees r_2
    g.removeValue(y2);    // frees y_2
    EXPECT_EQ(g.uniqueNodeName("r"), "r_2");
    EXPECT_EQ(g.uniqueValueName("y"), "y_2");
    EXPECT_FALSE(g.findNode("r_2"));
    EXPECT_TRUE(g.findNode("r_3"));
}

TEST(IRScale, FiftyThousandNodeChainSortsWithoutRecursion) {
    Graph g = reversedChain(50000, false);
    EXPECT_EQ(g.node(g.firstNode()).name, "n49999");
    g.sortTopologically();
    EXPECT_EQ(g.node(g.firstNode()).name, "n0");
    EXPECT_EQ(g.node(g.lastNode()).name, "n49999");
    EXPECT_TRUE(g.findCycle().empty());
    EXPECT_FALSE(g.nodeOnCycle());
}

TEST(IRScale, AFiftyThousandNodeCycleIsNamedNotRecursedInto) {
    Graph g = reversedChain(50000, true);
    std::vector<NodeId> cycle = g.findCycle();
    ASSERT_EQ(cycle.size(), 50000u);
    // Dataflow order: each node's output is read by the next one, the last feeds the first.
    for (size_t i = 0; i < cycle.size(); ++i) {
        const Node& from = g.node(cycle[i]);
        const Node& to = g.node(cycle[(i + 1) % cycle.size()]);
        ASSERT_EQ(to.inputs[0], from.outputs[0]) << from.name << " -> " << to.name;
    }
    try {
        g.sortTopologically();
        FAIL() << "a cycle must throw";
    } catch (const passlens::Error& e) {
        const std::string m = e.what();
        EXPECT_EQ(e.kind(), passlens::ErrorKind::BadInput);
        EXPECT_NE(m.find("has a cycle through node 'n"), std::string::npos) << m;
        EXPECT_NE(m.find(" -> ... -> "), std::string::npos) << m;
        EXPECT_LT(m.size(), 300u) << "a few names, not 50k";
    }
}

TEST(IRScale, ASmallCycleIsSpelledOutInDataflowOrder) {
    Graph g;
    g.name = "g";
    ValueId x = g.addInput("x", TypeInfo::tensor(DataType::Float));
    ValueId a = g.addValue("a"), b = g.addValue("b"), c = g.addValue("c");
    g.addNode("Add", {x, c}, {a}, {}, "first");
    g.addNode("Relu", {a}, {b}, {}, "second");
    g.addNode("Relu", {b}, {c}, {}, "third");
    g.markOutput(b);
    EXPECT_EQ(g.describeCycle(g.findCycle()), "first -> second -> third -> first");
    EXPECT_THROW(g.sortTopologically(), passlens::Error);
}

TEST(IRScale, DenseInsertsAtOneSpotKeepTheOrderLabelsConsistent) {
    // Each insert lands right after the first node: the label gap there halves every time, so the
    // list must relabel (locally, then more widely) and still compare correctly.
    NodeList list;
    list.append(0);
    list.append(1);
    std::vector<NodeId> expected{0, 1};
    for (NodeId n = 2; n < 3000; ++n) {
        list.insertBefore(n, expected[1]);
        expected.insert(expected.begin() + 1, n);
    }
    for (NodeId n = 3000; n < 6000; ++n) {  // and a run appended behind the last insert
        list.insertBefore(n, expected[1 + (n - 3000)]);
        expected.insert(expected.begin() + 1 + (n - 3000), n);
    }
    ASSERT_EQ(list.ids(), expected);
    for (size_t i = 0; i + 1 < expected.size(); ++i) ASSERT_TRUE(list.precedes(expected[i], expected[i + 1])) << i;
    list.erase(expected[5]);
    expected.erase(expected.begin() + 5);
    EXPECT_EQ(list.ids(), expected);
    EXPECT_EQ(list.size(), expected.size());
}
