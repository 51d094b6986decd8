// Recomputation strategies on a training graph (see Recompute.h). The rewrite: every dropped
// activation gets one copy of its forward node (and of the forward nodes between it and kept
// tensors), shared by all its backward readers and placed just before the first of them.
#include "autodiff/Recompute.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analysis/OpRegistry.h"
#include "autodiff/Autodiff.h"
#include "ir/Error.h"
#include "memory/MemoryPlan.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

bool isHeavyOp(const Node& n) {
    if (!n.domain.empty() && n.domain != "ai.onnx") return false;
    return n.opType == "MatMul" || n.opType == "Gemm" || n.opType == "Conv" || n.opType == "ConvTranspose";
}

std::string formatFlops(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", f);
    return buf;
}

std::string formatRatio(double a, double b) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", b == 0 ? 0.0 : a / b);
    return buf;
}

/// The forward facts of a training graph the strategies need, computed once.
class ForwardFacts {
public:
    ForwardFacts(const Graph& g, bool allowHeavy) : g_(g), allowHeavy_(allowHeavy) {
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

    const Graph& graph() const { return g_; }
    Role roleOf(NodeId n) const { return role_.at(n); }
    const std::vector<NodeId>& forwardNodes() const { return forward_; }
    size_t forwardPos(NodeId n) const { return forwardPos_.at(n); }
    /// Saved activations of known size, in forward order: what a strategy may drop.
    const std::vector<ValueId>& candidates() const { return candidates_; }
    bool isSaved(ValueId v) const { return saved_.count(v) > 0; }
    int64_t bytesOf(ValueId v) const { return memory::tensorBytes(g_.value(v).type).value_or(0); }

    /// Alive for the whole run anyway (and never recomputed): inputs, parameters, outputs, Constants.
    bool isStatic(ValueId v) const {
        const Value& val = g_.value(v);
        if (val.isConstant() || val.isGraphInput || val.isGraphOutput || val.isOuterScope || val.producer == kNone) return true;
        const Node& p = g_.node(val.producer);
        return p.opType == "Constant" && p.domain.empty();
    }

    /// A forward value the backward region must get from a copy when `drop` is dropped.
    bool needsCopy(ValueId u, const std::unordered_set<ValueId>& drop) const {
        if (u == kNone || isStatic(u)) return false;
        NodeId p = g_.value(u).producer;
        if (roleOf(p) != Role::Forward) return false;
        return drop.count(u) || !saved_.count(u);
    }

    /// The rule that forbids copying n, or empty.
    std::string banRule(NodeId n, std::string* detail) const {
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

    /// Forward nodes to copy so every value in `drop` can be recomputed, in forward order; the first
    /// banned node's rule in `rule` (then the closure is incomplete).
    std::vector<NodeId> closure(const std::vector<ValueId>& values, const std::unordered_set<ValueId>& drop,
                                std::string* rule = nullptr, std::string* detail = nullptr) const {
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
                if (needsCopy(u, drop)) stack.push_back(g_.value(u).producer);
        }
        std::vector<NodeId> out(seen.begin(), seen.end());
        std::sort(out.begin(), out.end(), [&](NodeId a, NodeId b) { return forwardPos(a) < forwardPos(b); });
        return out;
    }

    double flopsOf(const std::vector<NodeId>& nodes) const {
        double f = 0;
        for (NodeId n : nodes) f += analysis::costOf(g_, n).flops;
        return f;
    }

    double forwardFlops() const {
        double f = 0;
        for (NodeId n : forward_)
            if (g_.node(n).opType != "Constant") f += analysis::costOf(g_, n).flops;
        return f;
    }

private:
    const Graph& g_;
    bool allowHeavy_;
    std::unordered_map<NodeId, Role> role_;
    std::vector<NodeId> forward_;
    std::unordered_map<NodeId, size_t> forwardPos_;
    std::unordered_set<ValueId> saved_;
    std::vector<ValueId> candidates_;
};

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

std::vector<std::string> namesOf(const Graph& g, const std::vector<ValueId>& vs) {
    std::vector<std::string> out;
    for (ValueId v : vs) out.push_back(g.value(v).name);
    return out;
}

/// A drop set decided, with what it costs.
struct Choice {
    std::vector<ValueId> drop;
    std::vector<ValueId> checkpoints;
    std::vector<NodeId> copies;
    int64_t peak = 0;
};

int64_t peakWith(const Model& m, const ForwardFacts& facts, const std::vector<NodeId>& copies,
                 const std::unordered_set<ValueId>& drop) {
    if (drop.empty()) return plannedPeak(m);
    Model probe = m;
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(probe, probe.graph, "recompute", "", changes, remarks);
    insertCopies(rw, facts, copies, drop);
    return plannedPeak(probe);
}

Choice evaluate(const Model& m, const ForwardFacts& facts, std::vector<ValueId> drop) {
    Choice c;
    c.drop = std::move(drop);
    std::unordered_set<ValueId> set(c.drop.begin(), c.drop.end());
    c.copies = facts.closure(c.drop, set);
    c.peak = peakWith(m, facts, c.copies, set);
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
    return best;
}

Choice chooseBudget(const Model& m, const ForwardFacts& facts, int64_t budget, std::vector<KeptTensor>& keptByRule,
                    int64_t peakBefore, int64_t* lowest) {
    *lowest = peakBefore;
    if (peakBefore <= budget) return Choice{{}, {}, {}, peakBefore};
    std::vector<ValueId> order = droppable(facts, {}, keptByRule, true);
    // Cheapest to recompute per byte freed first (Chen's greedy; ties keep forward order).
    std::map<ValueId, double> costPerByte;
    for (ValueId v : order) {
        std::unordered_set<ValueId> alone{v};
        double bytes = static_cast<double>(std::max<int64_t>(1, facts.bytesOf(v)));
        costPerByte[v] = facts.flopsOf(facts.closure({v}, alone)) / bytes;
    }
    std::stable_sort(order.begin(), order.end(), [&](ValueId a, ValueId b) { return costPerByte[a] < costPerByte[b]; });
    auto prefix = [&](size_t k) { return evaluate(m, facts, {order.begin(), order.begin() + static_cast<long>(k)}); };
    Choice found;
    bool fits = false;
    if (order.size() <= 48) {
        // Small sets: every prefix in turn, so a planner's non-monotone step cannot hide a fit.
        for (size_t k = 1; k <= order.size() && !fits; ++k) {
            Choice c = prefix(k);
            *lowest = std::min(*lowest, c.peak);
            if (c.peak <= budget) { found = std::move(c); fits = true; }
        }
    } else {
        Choice all = prefix(order.size());
        *lowest = std::min(*lowest, all.peak);
        if (all.peak <= budget) {
            size_t lo = 0, hi = order.size();  // prefix(hi) fits, prefix(lo) does not
            found = std::move(all);
            while (hi - lo > 1) {
                size_t mid = (lo + hi) / 2;
                Choice c = prefix(mid);
                *lowest = std::min(*lowest, c.peak);
                if (c.peak <= budget) { hi = mid; found = std::move(c); }
                else lo = mid;
            }
            fits = true;
        }
    }
    // Dropping a long run without checkpoints recomputes it all at once (no saving on deep chains):
    // Chen's segmentations with segment lengths 2, 3, 4, 6, 8, 12, ... compete; fewest FLOPs wins.
    const std::vector<ValueId> seps = separators(facts);
    for (size_t k = 2, step = 1; k <= seps.size(); k += step, step = k / 2) {
        std::vector<KeptTensor> kept;
        Choice c = segmented(m, facts, seps, k, kept);
        *lowest = std::min(*lowest, c.peak);
        if (c.drop.empty() || c.peak > budget) continue;
        if (!fits || facts.flopsOf(c.copies) < facts.flopsOf(found.copies)) {
            found = std::move(c);
            fits = true;
        }
    }
    if (!fits) return Choice{{}, {}, {}, peakBefore};
    return found;
}

}  // namespace

std::string RecomputeOptions::text() const {
    std::string s = strategy == Strategy::None   ? "none"
                    : strategy == Strategy::Sqrt ? "sqrt"
                    : strategy == Strategy::All  ? "all"
                                                 : "budget=" + std::to_string(budgetBytes);
    if (heavy) s += *heavy ? ":heavy" : ":no-heavy";
    return s;
}

RecomputeOptions parseRecomputeOptions(const std::string& text) {
    const std::string usage = "--recompute must be none, sqrt, all or budget=BYTES (K/M/G suffix allowed), optionally followed by "
                              ":heavy or :no-heavy; not '" + text + "'";
    RecomputeOptions o;
    std::string s = text;
    if (auto colon = s.find(':'); colon != std::string::npos) {
        const std::string suffix = s.substr(colon + 1);
        if (suffix == "heavy") o.heavy = true;
        else if (suffix == "no-heavy") o.heavy = false;
        else throwBadInput(usage);
        s = s.substr(0, colon);
    }
    if (s == "none") return o;
    if (s == "sqrt" || s == "all") {
        o.strategy = s == "sqrt" ? RecomputeOptions::Strategy::Sqrt : RecomputeOptions::Strategy::All;
        return o;
    }
    if (s.rfind("budget=", 0) != 0) throwBadInput(usage);
    std::string num = s.substr(7);
    int64_t scale = 1;
    if (!num.empty() && std::string("KMG").find(static_cast<char>(std::toupper(num.back()))) != std::string::npos) {
        scale = int64_t{1} << (10 * (1 + static_cast<int>(std::string("KMG").find(static_cast<char>(std::toupper(num.back()))))));
        num.pop_back();
    }
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 15) throwBadInput(usage);
    o.strategy = RecomputeOptions::Strategy::Budget;
    o.budgetBytes = std::stoll(num) * scale;
    return o;
}

int64_t plannedPeak(const Model& m) {
    memory::PlanOptions po;
    po.planner = "best";
    return memory::planMemory(m, m.graph, po).arenaBytes;
}

RecomputeResult applyRecompute(passes::Rewriter& rw, const RecomputeOptions& options) {
    RecomputeResult r;
    r.strategy = options.text();
    const Model& m = rw.model();
    const Graph& g = rw.graph();
    bool backward = false, recomputed = false;
    for (NodeId n : g.nodeOrder()) {
        Role role = provenanceOf(g.node(n)).role;
        backward |= role == Role::Backward;
        recomputed |= role == Role::Recompute;
    }
    if (!backward) {
        r.message = "not a training graph (no backward nodes): nothing to recompute";
        return r;
    }
    if (recomputed) {
        r.message = "the graph already has recomputed nodes: recompute runs once, on the training graph autodiff built";
        return r;
    }
    ForwardFacts facts(g, options.allowsHeavy());
    r.savedActivations = namesOf(g, facts.candidates());
    r.forwardFlops = facts.forwardFlops();
    r.peakBefore = plannedPeak(m);
    Choice c;
    c.peak = r.peakBefore;
    int64_t lowest = r.peakBefore;
    switch (options.strategy) {
    case RecomputeOptions::Strategy::None: break;
    case RecomputeOptions::Strategy::Sqrt: c = chooseSqrt(m, facts, r.keptByRule, r.peakBefore); break;
    case RecomputeOptions::Strategy::All: c = evaluate(m, facts, droppable(facts, {}, r.keptByRule, false)); break;
    case RecomputeOptions::Strategy::Budget:
        c = chooseBudget(m, facts, options.budgetBytes, r.keptByRule, r.peakBefore, &lowest);
        if (r.peakBefore > options.budgetBytes && c.drop.empty()) {
            r.feasible = false;
            std::string rules;
            std::map<std::string, int> perRule;
            for (const auto& k : r.keptByRule) ++perRule[k.rule];
            for (const auto& [rule, n] : perRule) rules += (rules.empty() ? "" : ", ") + std::to_string(n) + " by " + rule;
            r.message = "recompute " + r.strategy + " is infeasible: the lowest planned arena is " + std::to_string(lowest) +
                        " bytes (no recomputation: " + std::to_string(r.peakBefore) + "); " +
                        std::to_string(r.savedActivations.size() - r.keptByRule.size()) + " of " +
                        std::to_string(r.savedActivations.size()) + " saved activations may be recomputed" +
                        (rules.empty() ? std::string() : " (kept " + rules + ")");
            r.peakAfter = r.peakBefore;
            return r;
        }
        break;
    }
    r.checkpoints = namesOf(g, c.checkpoints);
    r.dropped = namesOf(g, c.drop);
    r.extraFlops = facts.flopsOf(c.copies);
    if (!c.drop.empty()) {
        std::unordered_set<ValueId> drop(c.drop.begin(), c.drop.end());
        r.addedNodes = insertCopies(rw, facts, c.copies, drop);
    }
    r.peakAfter = c.peak;
    r.message = r.strategy + ": " + std::to_string(r.dropped.size()) + " of " + std::to_string(r.savedActivations.size()) +
                " saved activations recomputed by " + std::to_string(r.addedNodes.size()) + " nodes" +
                (r.checkpoints.empty() ? std::string() : ", " + std::to_string(r.checkpoints.size()) + " checkpoints") +
                "; planned arena " + std::to_string(r.peakBefore) + " -> " + std::to_string(r.peakAfter) + " bytes (" +
                formatRatio(static_cast<double>(r.peakAfter), static_cast<double>(r.peakBefore)) + "x); extra " +
                formatFlops(r.extraFlops) + " FLOPs = " + formatRatio(r.extraFlops, r.forwardFlops) + " forward passes";
    if (options.strategy == RecomputeOptions::Strategy::Sqrt && r.dropped.empty())
        r.message += " (no segmentation lowers the planned arena)";
    if (options.strategy == RecomputeOptions::Strategy::Budget && r.dropped.empty())
        r.message += " (the plan fits the budget already)";
    return r;
}

RecomputeResult recomputeModel(Model& m, const RecomputeOptions& options, bool throwIfInfeasible) {
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(m, m.graph, "recompute", "", changes, remarks);
    RecomputeResult r = applyRecompute(rw, options);
    if (!r.feasible && throwIfInfeasible) throwBadInput(r.message);
    return r;
}

}  // namespace passlens::autodiff
