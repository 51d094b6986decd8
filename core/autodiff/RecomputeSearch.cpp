// Solvers over recompute sets (see RecomputeFacts.h): a minimum cut of the forward graph (what to
// keep for the backward pass, fewest bytes), and the budget/Pareto search that evaluates every
// candidate by planning the rewritten training graph.
#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "autodiff/RecomputeFacts.h"
#include "memory/MemoryPlan.h"

namespace passlens::autodiff::remat {

using namespace passlens::ir;

namespace {

/// Dinic's maximum flow on a small graph; the source side of the minimum cut afterwards.
class MaxFlow {
public:
    static constexpr int64_t kInfinite = std::numeric_limits<int64_t>::max() / 4;

    explicit MaxFlow(int nodes) : adj_(static_cast<size_t>(nodes)), level_(adj_.size()), next_(adj_.size()) {}

    void addEdge(int from, int to, int64_t capacity) {
        adj_[static_cast<size_t>(from)].push_back(static_cast<int>(edges_.size()));
        edges_.push_back({to, capacity});
        adj_[static_cast<size_t>(to)].push_back(static_cast<int>(edges_.size()));
        edges_.push_back({from, 0});
    }

    void run(int source, int sink) {
        while (levels(source, sink)) {
            std::fill(next_.begin(), next_.end(), 0);
            while (push(source, sink, kInfinite) > 0) {}
        }
    }

    /// Nodes reachable from `source` in the residual graph (after run).
    std::vector<bool> sourceSide(int source) {
        levels(source, -1);
        std::vector<bool> side(adj_.size());
        for (size_t i = 0; i < adj_.size(); ++i) side[i] = level_[i] >= 0;
        return side;
    }

private:
    struct Edge {
        int to;
        int64_t capacity;
    };

    bool levels(int source, int sink) {
        std::fill(level_.begin(), level_.end(), -1);
        std::deque<int> queue{source};
        level_[static_cast<size_t>(source)] = 0;
        while (!queue.empty()) {
            int u = queue.front();
            queue.pop_front();
            for (int e : adj_[static_cast<size_t>(u)]) {
                const Edge& edge = edges_[static_cast<size_t>(e)];
                if (edge.capacity > 0 && level_[static_cast<size_t>(edge.to)] < 0) {
                    level_[static_cast<size_t>(edge.to)] = level_[static_cast<size_t>(u)] + 1;
                    queue.push_back(edge.to);
                }
            }
        }
        return sink >= 0 && level_[static_cast<size_t>(sink)] >= 0;
    }

    // Iterative would be safer on deep graphs; the networks here are forward graphs of a few
    // thousand nodes, and recursion depth is bounded by the BFS level of the sink.
    int64_t push(int u, int sink, int64_t flow) {
        if (u == sink) return flow;
        auto& i = next_[static_cast<size_t>(u)];
        for (; i < static_cast<int>(adj_[static_cast<size_t>(u)].size()); ++i) {
            const int e = adj_[static_cast<size_t>(u)][static_cast<size_t>(i)];
            Edge& edge = edges_[static_cast<size_t>(e)];
            if (edge.capacity <= 0 || level_[static_cast<size_t>(edge.to)] != level_[static_cast<size_t>(u)] + 1) continue;
            const int64_t pushed = push(edge.to, sink, std::min(flow, edge.capacity));
            if (pushed > 0) {
                edge.capacity -= pushed;
                edges_[static_cast<size_t>(e ^ 1)].capacity += pushed;
                return pushed;
            }
        }
        return 0;
    }

    std::vector<Edge> edges_;
    std::vector<std::vector<int>> adj_;
    std::vector<int> level_, next_;
};

/// Every evaluation of one search, with a cap so a large graph cannot run away.
class Evaluator {
public:
    /// At most `maxPlanned` choices planned and `maxMeasured` measured (live bytes only).
    Evaluator(const Model& m, const ForwardFacts& facts, size_t maxPlanned, size_t maxMeasured)
        : m_(m), facts_(facts), maxPlanned_(maxPlanned), maxMeasured_(maxMeasured) {}

    bool exhausted() const { return planned_ >= maxPlanned_ || measured_ >= maxMeasured_; }

    Choice run(std::vector<ValueId> drop, std::vector<ValueId> keep, const std::string& label,
               memory::MemoryPlan* plan = nullptr, int64_t planIfBoundAtMost = std::numeric_limits<int64_t>::max()) {
        Choice c = evaluate(m_, facts_, std::move(drop), std::move(keep), plan, planIfBoundAtMost);
        ++(c.planned ? planned_ : measured_);
        c.label = label;
        pool_.push_back(c);
        return c;
    }

    void add(const Choice& c) { pool_.push_back(c); }
    const std::vector<Choice>& pool() const { return pool_; }

private:
    const Model& m_;
    const ForwardFacts& facts_;
    size_t maxPlanned_, maxMeasured_;
    size_t planned_ = 0, measured_ = 0;
    std::vector<Choice> pool_;
};

/// FLOPs of recomputing v alone, given the rest of the drop set (the copies it shares count).
double recomputeCost(const ForwardFacts& facts, ValueId v, const std::unordered_set<ValueId>& drop,
                     const std::unordered_set<ValueId>& keep) {
    std::unordered_set<ValueId> with = drop;
    with.insert(v);
    std::string rule;
    std::vector<NodeId> nodes = facts.closure({v}, with, &rule, nullptr, &keep);
    if (!rule.empty()) return -1;  // banned
    return facts.flopsOf(nodes);
}

/// Keeps dropped activations again, most expensive to recompute first, while the arena stays within
/// `budget`: the FLOPs only go down and the choice stays feasible.
Choice trim(Evaluator& ev, const ForwardFacts& facts, Choice c, int64_t budget) {
    if (c.peak > budget || c.drop.empty()) return c;
    const std::unordered_set<ValueId> dropSet(c.drop.begin(), c.drop.end()), keepSet(c.keep.begin(), c.keep.end());
    std::vector<std::pair<double, ValueId>> order;
    for (ValueId v : c.drop) {
        std::unordered_set<ValueId> others = dropSet;
        others.erase(v);
        order.push_back({recomputeCost(facts, v, others, keepSet), v});
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const std::string label = c.label.find(" trimmed") == std::string::npos ? c.label + " trimmed" : c.label;
    for (const auto& [cost, v] : order) {
        if (ev.exhausted()) break;
        if (cost <= 0) continue;  // free to recompute: keeping it again gains nothing
        std::vector<ValueId> drop;
        for (ValueId d : c.drop)
            if (d != v) drop.push_back(d);
        Choice t = ev.run(drop, c.keep, label, nullptr, budget);
        if (t.planned && t.peak <= budget && t.flops < c.flops) {
            t.checkpoints = c.checkpoints;
            c = std::move(t);
        }
    }
    return c;
}

/// Greedy toward the peak: at each step the activation live at the step with the most live bytes
/// that is cheapest to recompute per byte is dropped; every step is a point. Stops at `budget`, or
/// after a few steps that lower nothing. Steps are planned only when their live bytes fit `budget`
/// (budget 0: none is planned, the caller plans the promising ones).
void peakDirected(Evaluator& ev, const ForwardFacts& facts, int64_t budget) {
    const int64_t limit = budget > 0 ? budget : -1;
    memory::MemoryPlan plan;
    Choice cur = ev.run({}, {}, "peak-greedy", &plan, limit);
    int64_t best = cur.peak;
    int stall = 0;
    std::unordered_set<ValueId> drop;
    const std::unordered_set<ValueId> noKeep;
    while (cur.peak > budget && stall < 6 && !ev.exhausted()) {
        if (plan.liveBytesPerStep.empty()) break;
        const int peakStep = static_cast<int>(std::max_element(plan.liveBytesPerStep.begin(), plan.liveBytesPerStep.end()) -
                                              plan.liveBytesPerStep.begin());
        std::unordered_set<ValueId> live;
        for (const auto& t : plan.lifetimes)
            if (t.value != kNone && t.first <= peakStep && peakStep <= t.last) live.insert(t.value);
        ValueId pick = kNone;
        double pickScore = 0;
        for (ValueId v : facts.candidates()) {
            if (drop.count(v) || !live.count(v)) continue;
            const double cost = recomputeCost(facts, v, drop, noKeep);
            if (cost < 0) continue;
            const double score = cost / static_cast<double>(std::max<int64_t>(1, facts.bytesOf(v)));
            if (pick == kNone || score < pickScore) {
                pick = v;
                pickScore = score;
            }
        }
        if (pick == kNone) break;
        drop.insert(pick);
        std::vector<ValueId> ordered;
        for (ValueId v : facts.candidates())
            if (drop.count(v)) ordered.push_back(v);
        cur = ev.run(ordered, {}, "peak-greedy", &plan, limit);
        if (cur.peak < best) {
            best = cur.peak;
            stall = 0;
        } else {
            ++stall;
        }
    }
}

/// Cheapest FLOPs per byte first, as prefixes (every prefix for small sets, else a halving search
/// for the shortest fitting one).
void cheapestFirst(Evaluator& ev, const ForwardFacts& facts, int64_t budget) {
    std::vector<KeptTensor> kept;
    std::vector<ValueId> order = droppable(facts, {}, kept, true);
    std::map<ValueId, double> costPerByte;
    for (ValueId v : order) {
        std::unordered_set<ValueId> alone{v};
        costPerByte[v] = facts.flopsOf(facts.closure({v}, alone)) / static_cast<double>(std::max<int64_t>(1, facts.bytesOf(v)));
    }
    std::stable_sort(order.begin(), order.end(), [&](ValueId a, ValueId b) { return costPerByte[a] < costPerByte[b]; });
    auto prefix = [&](size_t k) {
        return ev.run({order.begin(), order.begin() + static_cast<long>(k)}, {}, "cheapest-first", nullptr, budget);
    };
    if (order.empty()) return;
    if (order.size() <= 24) {
        for (size_t k = 1; k <= order.size() && !ev.exhausted(); ++k)
            if (prefix(k).peak <= budget) return;
        return;
    }
    if (prefix(order.size()).peak > budget) return;
    size_t lo = 0, hi = order.size();
    while (hi - lo > 1 && !ev.exhausted()) {
        size_t mid = (lo + hi) / 2;
        if (prefix(mid).peak <= budget) hi = mid;
        else lo = mid;
    }
}

/// The seeds every search starts from: none, √n, all, Chen's segmentations, the min cuts.
void seed(Evaluator& ev, const Model& m, const ForwardFacts& facts) {
    Choice none = ev.run({}, {}, "store-all");
    std::vector<KeptTensor> kept;
    Choice sq = chooseSqrt(m, facts, kept, none.peak);
    if (!sq.drop.empty()) ev.add(sq);
    ev.add(chooseAll(m, facts, kept));
    const std::vector<ValueId> seps = separators(facts);
    for (size_t k = 2, step = 1; k <= seps.size() && !ev.exhausted(); k += step, step = k / 2) {
        Choice c = segmented(m, facts, seps, k, kept);
        if (!c.drop.empty()) ev.add(c);
    }
    ev.add(chooseMinCut(m, facts));
    if (facts.allowsHeavy()) {
        const ForwardFacts light(facts.graph(), false);
        const Choice c = chooseMinCut(m, light);
        // Re-evaluated with the caller's facts so its FLOPs and copies are counted the same way.
        Choice same = evaluate(m, facts, c.drop, c.keep);
        same.label = "mincut:no-heavy";
        ev.add(same);
    }
}

/// Non-dominated choices (lower arena or fewer FLOPs), lowest arena first.
std::vector<Choice> frontier(std::vector<Choice> pool) {
    std::sort(pool.begin(), pool.end(), [](const Choice& a, const Choice& b) {
        return a.peak != b.peak ? a.peak < b.peak : a.flops < b.flops;
    });
    std::vector<Choice> out;
    for (Choice& c : pool)
        if (c.planned && (out.empty() || c.flops < out.back().flops)) out.push_back(std::move(c));
    return out;
}

/// At most `n` of `items`, evenly spread, first and last included.
std::vector<Choice> spread(const std::vector<Choice>& items, size_t n) {
    if (items.size() <= n) return items;
    std::vector<Choice> out;
    for (size_t i = 0; i < n; ++i) out.push_back(items[i * (items.size() - 1) / (n - 1)]);
    return out;
}

}  // namespace

Choice chooseMinCut(const Model& m, const ForwardFacts& facts) {
    const Graph& g = facts.graph();
    // One split node per forward value (in → out, capacity = bytes to keep it).
    std::unordered_map<ValueId, int> index;
    std::vector<ValueId> values;
    for (NodeId n : facts.forwardNodes())
        for (ValueId v : g.node(n).outputs)
            if (v != kNone && !facts.isStatic(v) && !index.count(v)) {
                index[v] = static_cast<int>(values.size());
                values.push_back(v);
            }
    const int source = static_cast<int>(2 * values.size()), sink = source + 1;
    MaxFlow flow(sink + 1);
    // Ties between equal-byte cuts go to values later in the forward order (less to recompute):
    // bytes are scaled past the sum of any cut's tie-break terms.
    const int64_t positions = static_cast<int64_t>(facts.forwardNodes().size()) + 1;
    const int64_t scale = std::min<int64_t>(positions * positions + 1, int64_t{1} << 20);
    for (size_t i = 0; i < values.size(); ++i) {
        const ValueId v = values[i];
        const NodeId producer = g.value(v).producer;
        const int64_t tie = positions - 1 - static_cast<int64_t>(facts.forwardPos(producer));
        flow.addEdge(static_cast<int>(2 * i), static_cast<int>(2 * i + 1), facts.bytesOf(v) * scale + std::min(tie, scale - 1));
        if (!facts.banRule(producer, nullptr).empty()) flow.addEdge(source, static_cast<int>(2 * i), MaxFlow::kInfinite);
        if (facts.isSaved(v)) flow.addEdge(static_cast<int>(2 * i + 1), sink, MaxFlow::kInfinite);
        for (ValueId u : g.readsOf(producer))
            if (auto it = index.find(u); it != index.end())
                flow.addEdge(2 * it->second + 1, static_cast<int>(2 * i), MaxFlow::kInfinite);
    }
    flow.run(source, sink);
    const std::vector<bool> side = flow.sourceSide(source);
    std::unordered_set<ValueId> kept;
    std::vector<ValueId> keep;
    for (size_t i = 0; i < values.size(); ++i)
        if (side[2 * i] && !side[2 * i + 1]) {
            kept.insert(values[i]);
            if (!facts.isSaved(values[i])) keep.push_back(values[i]);
        }
    std::vector<ValueId> drop;
    for (ValueId v : facts.candidates())
        if (!kept.count(v)) drop.push_back(v);
    Choice c = evaluate(m, facts, drop, drop.empty() ? std::vector<ValueId>{} : keep);
    c.label = "mincut";
    return c;
}

Choice solveBudget(const Model& m, const ForwardFacts& facts, int64_t budget, int64_t peakBefore, int64_t* lowest) {
    Evaluator ev(m, facts, 120, 2000);
    seed(ev, m, facts);
    peakDirected(ev, facts, budget);
    cheapestFirst(ev, facts, budget);
    // Nothing may fit; the lowest arena reached is then the message's figure, so the choice with
    // the fewest live bytes that skipped the planners is planned too.
    const Choice* fewestLive = nullptr;
    for (const Choice& c : ev.pool())
        if (!c.planned && (!fewestLive || c.bound < fewestLive->bound)) fewestLive = &c;
    if (fewestLive) {
        const Choice c = *fewestLive;
        ev.run(c.drop, c.keep, c.label);
    }
    *lowest = peakBefore;
    for (const Choice& c : ev.pool())
        if (c.planned) *lowest = std::min(*lowest, c.peak);
    // The fitting seeds, fewest FLOPs first; the best few are trimmed.
    std::vector<Choice> fitting;
    for (const Choice& c : ev.pool())
        if (c.planned && c.peak <= budget) fitting.push_back(c);
    if (fitting.empty()) return Choice{};
    std::stable_sort(fitting.begin(), fitting.end(), [](const Choice& a, const Choice& b) { return a.flops < b.flops; });
    Choice best = fitting.front();
    for (size_t i = 0; i < fitting.size() && i < 4; ++i) {
        Choice t = trim(ev, facts, fitting[i], budget);
        if (t.flops < best.flops || (t.flops == best.flops && t.peak < best.peak)) best = std::move(t);
    }
    return best;
}

std::vector<Choice> exploreChoices(const Model& m, const ForwardFacts& facts, int64_t peakBefore) {
    (void)peakBefore;
    Evaluator ev(m, facts, 160, 2000);
    seed(ev, m, facts);
    peakDirected(ev, facts, 0);
    // The greedy's steps were measured (live bytes) only: the non-dominated ones by that measure,
    // at most 40 spread along the curve, are planned.
    std::vector<Choice> measured;
    for (const Choice& c : ev.pool())
        if (!c.planned) {
            measured.push_back(c);
            measured.back().planned = true;  // rank by the bound
        }
    for (const Choice& c : spread(frontier(measured), 40)) ev.run(c.drop, c.keep, c.label);
    // Frontier choices (at most 12, spread) trimmed at their own arena: the same arena, fewer FLOPs.
    for (const Choice& c : spread(frontier(ev.pool()), 12)) {
        if (ev.exhausted()) break;
        trim(ev, facts, c, c.peak);
    }
    std::vector<Choice> out;
    for (const Choice& c : ev.pool())
        if (c.planned) out.push_back(c);
    return out;
}

}  // namespace passlens::autodiff::remat
