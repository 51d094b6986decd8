// The forward facts of a training graph, the copy rewrite and the evaluation of one recompute
// choice (see RecomputeFacts.h), plus Chen's segmentations the strategies and solvers share.
#include "autodiff/RecomputeFacts.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/OpRegistry.h"
#include "memory/MemoryPlan.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff::remat {

using namespace passlens::ir;

bool isHeavyOp(const Node& n) {
    if (!n.domain.empty() && n.domain != "ai.onnx") return false;
    return n.opType == "MatMul" || n.opType == "Gemm" || n.opType == "Conv" || n.opType == "ConvTranspose";
}

ForwardFacts::ForwardFacts(const Graph& g, bool allowHeavy) : g_(g), allowHeavy_(allowHeavy) {
    for (NodeId n : g.nodeOrder()) {
        Role r = provenanceOf(g.node(n)).role;
        role_[n] = r;
        if (r == Role::Forward) {
            forwardPos_[n] = forward_.size();
            forward_.push_back(n);
        }
    }
    for (NodeId n : forward_)
        for (ValueId v : g.node(n).outputs) {
            if (v == kNone || isStatic(v)) continue;
            bool readByBackward = false;
            for (NodeId c : g.value(v).consumers) readByBackward |= roleOf(c) == Role::Backward;
            if (!readByBackward) continue;
            saved_.insert(v);
            if (memory::tensorBytes(g.value(v).type)) candidates_.push_back(v);
        }
}

int64_t ForwardFacts::bytesOf(ValueId v) const { return memory::tensorBytes(g_.value(v).type).value_or(0); }

bool ForwardFacts::isStatic(ValueId v) const {
    const Value& val = g_.value(v);
    if (val.isConstant() || val.isGraphInput || val.isGraphOutput || val.isOuterScope || val.producer == kNone) return true;
    const Node& p = g_.node(val.producer);
    return p.opType == "Constant" && p.domain.empty();
}

bool ForwardFacts::needsCopy(ValueId u, const std::unordered_set<ValueId>& drop, const std::unordered_set<ValueId>* keep) const {
    if (u == kNone || isStatic(u)) return false;
    NodeId p = g_.value(u).producer;
    if (roleOf(p) != Role::Forward) return false;
    if (drop.count(u)) return true;
    return !saved_.count(u) && !(keep && keep->count(u));
}

std::string ForwardFacts::banRule(NodeId n, std::string* detail) const {
    const Node& node = g_.node(n);
    auto say = [&](const std::string& rule, const std::string& why) {
        if (detail) *detail = "recomputing it needs " + node.opType + " '" + node.displayName() + "' (" + why + ")";
        return rule;
    };
    if (analysis::isNondeterministic(g_, n)) return say("nondeterministic", "a random op gives other values twice");
    if (node.hasSubgraphs()) return say("control-flow", "subgraphs are not copied");
    if (!allowHeavy_ && isHeavyOp(node)) return say("heavy-op", "MatMul/Gemm/Conv are kept by default; ':heavy' allows them");
    return {};
}

std::vector<NodeId> ForwardFacts::closure(const std::vector<ValueId>& values, const std::unordered_set<ValueId>& drop,
                                          std::string* rule, std::string* detail, const std::unordered_set<ValueId>* keep) const {
    std::unordered_set<NodeId> seen;
    std::vector<NodeId> stack;
    for (ValueId v : values) stack.push_back(g_.value(v).producer);
    while (!stack.empty()) {
        NodeId n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second) continue;
        std::string r = banRule(n, detail);
        if (!r.empty()) {
            if (rule) *rule = r;
            return {};
        }
        for (ValueId u : g_.readsOf(n))
            if (needsCopy(u, drop, keep)) stack.push_back(g_.value(u).producer);
    }
    std::vector<NodeId> out(seen.begin(), seen.end());
    std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return forwardPos(a) < forwardPos(b); });
    return out;
}

double ForwardFacts::flopsOf(const std::vector<NodeId>& nodes) const {
    double f = 0;
    for (NodeId n : nodes) f += analysis::costOf(g_, n).flops;
    return f;
}

double ForwardFacts::forwardFlops() const {
    double f = 0;
    for (NodeId n : forward_)
        if (g_.node(n).opType != "Constant") f += analysis::costOf(g_, n).flops;
    return f;
}


/// Rewrites the graph: copies of `nodes` (forward order) produce the dropped values for the
/// backward readers. Returns the copies.
std::vector<NodeId> insertCopies(passes::Rewriter& rw, const ForwardFacts& facts, const std::vector<NodeId>& nodes,
                                 const std::unordered_set<ValueId>& drop) {
    const Graph& g = rw.graph();
    std::unordered_map<ValueId, ValueId> copyOf;
    for (NodeId n : nodes)
        for (ValueId v : g.node(n).outputs)
            if (v != kNone) copyOf[v] = rw.newValue(g.value(v).name + "_recomputed", g.value(v).type);
    // Backward readers first, so each copy lands just before its earliest reader.
    for (ValueId v : drop) {
        std::vector<NodeId> readers = g.value(v).consumers;
        std::sort(readers.begin(), readers.end());
        readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
        for (NodeId r : readers) {
            if (facts.roleOf(r) != Role::Backward) continue;
            const auto inputs = g.node(r).inputs;
            for (size_t slot = 0; slot < inputs.size(); ++slot)
                if (inputs[slot] == v)
                    rw.setInput(r, slot, copyOf.at(v), "reads '" + g.value(v).name + "' recomputed instead of saved");
        }
    }
    std::vector<NodeId> added;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
        const Node original = g.node(*it);  // a copy: adding nodes may move the node table
        std::vector<ValueId> inputs, outputs;
        NodeProvenance p;
        p.role = Role::Recompute;
        p.forwardNode = original.displayName();
        p.note = "recomputed from " + original.displayName();
        for (ValueId u : original.inputs) {
            auto c = u == kNone ? copyOf.end() : copyOf.find(u);
            inputs.push_back(c == copyOf.end() ? u : c->second);
            if (c == copyOf.end() && u != kNone) p.saved.push_back(g.value(u).name);
        }
        for (ValueId v : original.outputs) outputs.push_back(v == kNone ? kNone : copyOf.at(v));
        NodeId id = rw.addDerivedNode(original.opType, inputs, outputs, original.attributes, original.id,
                                      "recomputed from " + original.displayName(), original.displayName() + "_recompute",
                                      original.domain);
        setProvenance(rw, id, p);
        added.push_back(id);
    }
    std::reverse(added.begin(), added.end());
    return added;
}


Choice evaluate(const Model& m, const ForwardFacts& facts, std::vector<ValueId> drop, std::vector<ValueId> keep,
                memory::MemoryPlan* plan, int64_t planIfBoundAtMost) {
    Choice c;
    c.drop = std::move(drop);
    c.keep = std::move(keep);
    const std::unordered_set<ValueId> dropSet(c.drop.begin(), c.drop.end()), keepSet(c.keep.begin(), c.keep.end());
    c.copies = facts.closure(c.drop, dropSet, nullptr, nullptr, &keepSet);
    c.flops = facts.flopsOf(c.copies);
    auto measure = [&](const Model& probe) {
        memory::MemoryPlan p = memory::analyzeMemory(probe, probe.graph, memory::makeSchedule(probe.graph, memory::ScheduleKind::Model));
        c.bound = p.lowerBoundBytes;
        if (c.bound > planIfBoundAtMost) {
            c.peak = c.bound;  // cannot fit: the planner's arena is at least the bound
            c.planned = false;
        } else {
            const memory::MemoryPlan arena = memory::planLifetimes(p.lifetimes, "best");
            p.planner = arena.planner;
            p.arenaBytes = arena.arenaBytes;
            p.buffers = arena.buffers;
            c.peak = arena.arenaBytes;
        }
        if (plan) *plan = std::move(p);
    };
    if (c.drop.empty()) {
        measure(m);
        return c;
    }
    Model probe = m;
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(probe, probe.graph, "recompute", "", changes, remarks);
    insertCopies(rw, facts, c.copies, dropSet);
    measure(probe);
    return c;
}

/// Drops the candidates whose recomputation no rule forbids, given `keep`; fills keptByRule.
std::vector<ValueId> droppable(const ForwardFacts& facts, const std::unordered_set<ValueId>& keep,
                               std::vector<KeptTensor>& keptByRule, bool standalone) {
    std::vector<ValueId> out;
    std::unordered_set<ValueId> drop;
    for (ValueId v : facts.candidates()) {
        if (keep.count(v)) continue;
        // Forward order: earlier decisions are final before a later value's closure reaches them.
        std::unordered_set<ValueId> trial = standalone ? std::unordered_set<ValueId>{v} : drop;
        trial.insert(v);
        std::string rule, detail;
        facts.closure({v}, trial, &rule, &detail);
        if (!rule.empty()) {
            keptByRule.push_back({facts.graph().value(v).name, rule, detail});
            continue;
        }
        drop.insert(v);
        out.push_back(v);
    }
    return out;
}

/// Saved activations that alone cross a cut of the forward schedule: the layer boundaries of a
/// chain, the articulation points of a DAG.
std::vector<ValueId> separators(const ForwardFacts& facts) {
    const Graph& g = facts.graph();
    const size_t n = facts.forwardNodes().size();
    std::vector<int> crossing(n + 1, 0);
    // v crosses the cut after position i when produced at or before i and read by a forward node after i.
    std::unordered_map<ValueId, std::pair<size_t, size_t>> span;
    for (NodeId p : facts.forwardNodes())
        for (ValueId v : g.node(p).outputs) {
            if (v == kNone || facts.isStatic(v)) continue;
            size_t first = facts.forwardPos(p), last = first;
            for (NodeId c : g.value(v).consumers)
                if (facts.roleOf(c) == Role::Forward) last = std::max(last, facts.forwardPos(c));
            span[v] = {first, last};
            if (first < last) {  // difference array: +1 over [first, last)
                ++crossing[first];
                --crossing[last];
            }
        }
    for (size_t i = 1; i <= n; ++i) crossing[i] += crossing[i - 1];
    std::vector<ValueId> out;
    for (ValueId v : facts.candidates()) {
        auto [first, last] = span.at(v);
        if (crossing[first] - (first < last ? 1 : 0) == 0) out.push_back(v);
    }
    return out;
}

/// Chen's segmentation: every k-th separator is a checkpoint, every other droppable activation is
/// recomputed from the checkpoint before it.
Choice segmented(const Model& m, const ForwardFacts& facts, const std::vector<ValueId>& seps, size_t k,
                 std::vector<KeptTensor>& kept) {
    std::unordered_set<ValueId> keep;
    std::vector<ValueId> checkpoints;
    for (size_t j = k - 1; j < seps.size(); j += k) {
        keep.insert(seps[j]);
        checkpoints.push_back(seps[j]);
    }
    Choice c = evaluate(m, facts, droppable(facts, keep, kept, false));
    c.checkpoints = std::move(checkpoints);
    c.label = "segments of " + std::to_string(k);
    return c;
}

Choice chooseSqrt(const Model& m, const ForwardFacts& facts, std::vector<KeptTensor>& keptByRule, int64_t peakBefore) {
    const std::vector<ValueId> seps = separators(facts);
    const double root = std::sqrt(static_cast<double>(seps.size()));
    std::set<size_t> lengths;
    for (long k = static_cast<long>(std::floor(root)) - 1; k <= static_cast<long>(std::ceil(root)) + 1; ++k)
        if (k >= 2 && static_cast<size_t>(k) <= seps.size()) lengths.insert(static_cast<size_t>(k));
    Choice best;
    best.peak = peakBefore;
    std::vector<KeptTensor> bestKept;
    for (size_t k : lengths) {
        std::vector<KeptTensor> kept;
        Choice c = segmented(m, facts, seps, k, kept);
        if (c.drop.empty() || c.peak >= best.peak) continue;
        best = std::move(c);
        bestKept = std::move(kept);
    }
    if (best.drop.empty()) droppable(facts, {}, keptByRule, false);  // still say which rules keep what
    else keptByRule = std::move(bestKept);
    best.label = "sqrt";
    return best;
}

Choice chooseAll(const Model& m, const ForwardFacts& facts, std::vector<KeptTensor>& keptByRule) {
    Choice c = evaluate(m, facts, droppable(facts, {}, keptByRule, false));
    c.label = "all";
    return c;
}

}  // namespace passlens::autodiff::remat
