// Schedulers on hand-built random problems (1000 DAGs of 3-10 nodes): every order is topological, the exact search equals a
// brute force over all topological orders (with and without splitting at cut nodes), and
// greedy >= exact >= the any-order bound. The simulator's peak is also checked against
// memory::lowerBound on the same order's lifetimes, built here independently.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "memory/MemoryPlan.h"
#include "schedule/Schedulers.h"

using namespace passlens;
using schedule::Problem;

namespace {

/// A random DAG problem: node indices are topological unless `shuffle`; each node produces one or
/// two tensors read by random later nodes; some outputs have an input's size and may overwrite it.
Problem randomProblem(std::mt19937& rng, int n, bool shuffle) {
    std::vector<int> label(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) label[static_cast<size_t>(i)] = i;
    if (shuffle) std::shuffle(label.begin(), label.end(), rng);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Problem p;
    p.workspace.assign(static_cast<size_t>(n), 0);
    p.inplaceHosts.assign(static_cast<size_t>(n), {});
    std::vector<std::vector<int>> producedBy(static_cast<size_t>(n));
    std::vector<std::vector<int>> readsOf(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
        const int outs = pick(0, 3) == 0 ? 2 : 1;
        for (int k = 0; k < outs; ++k) {
            Problem::Tensor t;
            t.producer = label[static_cast<size_t>(i)];
            t.bytes = pick(0, 6) == 0 ? 0 : pick(1, 8) * 16;
            const int readers = pick(0, 3);
            for (int r = 0; r < readers && i + 1 < n; ++r) {
                const int j = pick(i + 1, std::min(n - 1, i + 4));
                t.readers.push_back(label[static_cast<size_t>(j)]);
                readsOf[static_cast<size_t>(j)].push_back(static_cast<int>(p.tensors.size()));
            }
            producedBy[static_cast<size_t>(i)].push_back(static_cast<int>(p.tensors.size()));
            p.tensors.push_back(std::move(t));
        }
        if (pick(0, 4) == 0) p.workspace[static_cast<size_t>(label[static_cast<size_t>(i)])] = pick(1, 4) * 8;
    }
    // In place: output 0 takes an input's size, like an elementwise op.
    for (int j = 0; j < n; ++j) {
        if (readsOf[static_cast<size_t>(j)].empty() || pick(0, 2) != 0) continue;
        const int host = readsOf[static_cast<size_t>(j)][0];
        const int out = producedBy[static_cast<size_t>(j)][0];
        if (p.tensors[static_cast<size_t>(host)].bytes == 0) continue;
        p.tensors[static_cast<size_t>(out)].bytes = p.tensors[static_cast<size_t>(host)].bytes;
        p.inplaceHosts[static_cast<size_t>(label[static_cast<size_t>(j)])].push_back(host);
    }
    p.finish();
    return p;
}

/// The lowest peak over every topological order, by enumeration.
int64_t bruteForce(const Problem& p, size_t* orders = nullptr) {
    std::vector<int> order;
    std::vector<char> done(p.size(), 0);
    int64_t best = INT64_MAX;
    size_t count = 0;
    std::function<void()> rec = [&] {
        if (order.size() == p.size()) {
            ++count;
            best = std::min(best, schedule::simulatePeak(p, order));
            return;
        }
        for (size_t v = 0; v < p.size(); ++v) {
            if (done[v]) continue;
            bool ready = true;
            for (int q : p.preds[v]) ready = ready && done[static_cast<size_t>(q)];
            if (!ready) continue;
            done[v] = 1;
            order.push_back(static_cast<int>(v));
            rec();
            order.pop_back();
            done[v] = 0;
        }
    };
    rec();
    if (orders) *orders = count;
    return best;
}

/// memory::lowerBound over lifetimes built from an order (in-place candidates by the memory
/// module's rule: the host dies where output 0 is born, same size).
int64_t lowerBoundViaLifetimes(const Problem& p, const std::vector<int>& order) {
    std::vector<int> step(p.size());
    for (size_t i = 0; i < order.size(); ++i) step[static_cast<size_t>(order[i])] = static_cast<int>(i);
    std::vector<memory::TensorLifetime> ts;
    std::vector<int> indexOf(p.tensors.size(), -1);
    for (size_t t = 0; t < p.tensors.size(); ++t) {
        const auto& x = p.tensors[t];
        memory::TensorLifetime l;
        l.name = "t" + std::to_string(t);
        l.bytes = x.bytes;
        l.first = l.last = step[static_cast<size_t>(x.producer)];
        for (int r : x.readers) {
            l.readers.push_back(step[static_cast<size_t>(r)]);
            l.last = std::max(l.last, step[static_cast<size_t>(r)]);
        }
        indexOf[t] = static_cast<int>(ts.size());
        ts.push_back(std::move(l));
    }
    for (size_t v = 0; v < p.size(); ++v) {
        if (p.outputs[v].empty()) continue;
        auto& out = ts[static_cast<size_t>(indexOf[static_cast<size_t>(p.outputs[v][0])])];
        for (int h : p.inplaceHosts[v]) {
            const auto& host = ts[static_cast<size_t>(indexOf[static_cast<size_t>(h)])];
            if (host.last == out.first && host.bytes == out.bytes) out.inplaceCandidates.push_back(indexOf[static_cast<size_t>(h)]);
        }
    }
    for (size_t v = 0; v < p.size(); ++v)
        if (p.workspace[v] > 0) {
            memory::TensorLifetime w;
            w.name = "ws";
            w.isWorkspace = true;
            w.bytes = p.workspace[v];
            w.first = w.last = step[v];
            ts.push_back(std::move(w));
        }
    return memory::lowerBound(ts);
}

TEST(ScheduleSearch, ExactEqualsBruteForceOnRandomDags) {
    std::mt19937 rng(31);
    int improvedOverGreedy = 0, cases = 0, withCuts = 0;
    size_t totalOrders = 0;
    for (int iter = 0; iter < 1000; ++iter) {
        const int n = 3 + iter % 8;  // 3..10 nodes
        const Problem p = randomProblem(rng, n, iter % 3 == 0);
        size_t orders = 0;
        const int64_t optimum = bruteForce(p, &orders);
        totalOrders += orders;
        const auto bound = schedule::anyOrderBound(p);
        EXPECT_LE(bound.bytes, optimum) << "iteration " << iter;
        int64_t greedyPeak = INT64_MAX;
        for (const auto& name : schedule::schedulerNames()) {
            const auto run = schedule::runScheduler(p, name);
            ASSERT_TRUE(schedule::isTopological(p, run.order)) << name << " iteration " << iter;
            EXPECT_EQ(run.peakBytes, schedule::simulatePeak(p, run.order));
            EXPECT_EQ(run.peakBytes, lowerBoundViaLifetimes(p, run.order)) << name << " iteration " << iter;
            EXPECT_GE(run.peakBytes, optimum) << name << " iteration " << iter;
            // Moving sources next to their first reader never raises a peak.
            const auto delayed = schedule::delaySources(p, run.order);
            EXPECT_TRUE(schedule::isTopological(p, delayed));
            EXPECT_LE(schedule::simulatePeak(p, delayed), run.peakBytes) << name << " iteration " << iter;
            if (name == "greedy") greedyPeak = run.peakBytes;
            if (name == "search" || name == "best") {
                EXPECT_EQ(run.peakBytes, optimum) << name << " iteration " << iter;
                EXPECT_TRUE(run.optimal) << name << " iteration " << iter << ": " << run.fallback;
            }
        }
        schedule::SearchOptions whole;
        whole.segment = false;
        const auto unsplit = schedule::searchOrder(p, whole, schedule::exporterOrder(p));
        EXPECT_EQ(unsplit.peakBytes, optimum) << "without segments, iteration " << iter;
        EXPECT_EQ(unsplit.segments, 1);
        const auto split = schedule::searchOrder(p, {}, schedule::exporterOrder(p));
        EXPECT_EQ(split.peakBytes, optimum) << "with segments, iteration " << iter;
        withCuts += split.segments > 1;
        improvedOverGreedy += optimum < greedyPeak;
        ++cases;
    }
    // The cases must exercise something: the search beats greedy somewhere, segments occur.
    EXPECT_GT(improvedOverGreedy, 25) << "of " << cases;
    EXPECT_GT(withCuts, 125) << "of " << cases;
    std::printf("random DAGs: %d cases, %zu topological orders enumerated, search below greedy on %d, split on %d\n", cases,
                totalOrders, improvedOverGreedy, withCuts);
}

TEST(ScheduleSearch, StateCapFallsBackToBestGreedyAndSaysSo) {
    // Eight independent two-node branches: an expanding node then a shrinking one. Width 8 and a
    // cap of 5 states: the search must stop, keep a valid order no worse than its start, and say so.
    Problem p;
    const int branches = 8;
    p.workspace.assign(static_cast<size_t>(2 * branches + 1), 0);
    for (int b = 0; b < branches; ++b) {
        p.tensors.push_back({64 + b, 2 * b, {2 * b + 1}});
        p.tensors.push_back({8, 2 * b + 1, {2 * branches}});
    }
    p.tensors.push_back({4, 2 * branches, {}});
    p.finish();
    schedule::SearchOptions tiny;
    tiny.stateCap = 5;
    // Start from the breadth-first order (all expanders first): far from the optimum.
    const auto start = schedule::bfsOrder(p);
    const auto capped = schedule::searchOrder(p, tiny, start);
    EXPECT_TRUE(schedule::isTopological(p, capped.order));
    EXPECT_LE(capped.peakBytes, schedule::simulatePeak(p, start));
    EXPECT_FALSE(capped.optimal);
    EXPECT_NE(capped.fallback.find("state cap"), std::string::npos) << capped.fallback;
    const auto full = schedule::searchOrder(p, {}, start);
    EXPECT_TRUE(full.optimal) << full.fallback;
    // Whichever branch runs last has the seven other 8-byte results live beside its expander and
    // its own result: 56 + 64 + 8 at best (the smallest expander last).
    EXPECT_EQ(full.peakBytes, 128);
}

}  // namespace
