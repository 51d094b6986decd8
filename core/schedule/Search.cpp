// Exact search over topological orders (SERENITY-style dynamic programming over scheduled-node
// sets): the bytes live after a set of nodes ran do not depend on their order, so the best peak
// reaching a set is all that matters about how it was reached (memoized). Depth first, children
// in LPMF order so good orders come first, pruned by the best peak found so far (starting from the
// best greedy order). The graph is split at cut nodes, which every order runs at the same place, and
// each segment is searched on its own.
#include <algorithm>
#include <chrono>
#include <unordered_map>

#include "ir/Error.h"
#include "schedule/Schedulers.h"

namespace passlens::schedule {

namespace {

/// Memo entries use about this many bytes each besides the key.
constexpr int64_t kMemoEntryOverhead = 64;
constexpr int64_t kMemoBytesLimit = int64_t{512} << 20;

struct KeyHash {
    size_t operator()(const std::vector<uint64_t>& k) const {
        uint64_t h = 0x9e3779b97f4a7c15ull;
        for (uint64_t w : k) {
            h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
            h *= 0xbf58476d1ce4e5b9ull;
        }
        return static_cast<size_t>(h ^ (h >> 31));
    }
};

class SegmentSearch {
public:
    SegmentSearch(Simulator& sim, const std::vector<int>& nodes, int64_t incumbent, int64_t target, int64_t stateCap)
        : sim_(sim), nodes_(nodes), incumbent_(incumbent), target_(target), cap_(stateCap) {
        local_.assign(sim.p.size(), -1);
        for (size_t i = 0; i < nodes.size(); ++i) local_[static_cast<size_t>(nodes[i])] = static_cast<int>(i);
        key_.assign((nodes.size() + 63) / 64, 0);
    }

    /// Returns true when it found an order with a peak below the incumbent (then in best()).
    bool run() {
        std::vector<int> ready;
        for (int v : nodes_)
            if (sim_.waiting[static_cast<size_t>(v)] == 0) ready.push_back(v);
        // Peaks up to the target are as good as the target for the whole order: start there, so
        // more nodes qualify as free moves and more sets merge.
        dfs(ready, target_);
        return !best_.empty();
    }
    const std::vector<int>& best() const { return best_; }
    int64_t peak() const { return incumbent_; }
    bool capped() const { return capped_; }
    bool reachedTarget() const { return reachedTarget_; }
    int64_t states() const { return static_cast<int64_t>(memo_.size()); }

private:
    void dfs(const std::vector<int>& ready, int64_t peak) {
        if (path_.size() == nodes_.size()) {
            if (peak < incumbent_) {
                incumbent_ = peak;
                best_ = path_;
                if (incumbent_ <= target_) reachedTarget_ = stop_ = true;
            }
            return;
        }
        auto [it, inserted] = memo_.try_emplace(key_, peak);
        if (!inserted) {
            if (it->second <= peak) return;  // this set was already expanded from a lower peak
            it->second = peak;
        } else if (static_cast<int64_t>(memo_.size()) > cap_) {
            capped_ = stop_ = true;
            return;
        }
        struct Child {
            int64_t run, after;
            int v;
        };
        std::vector<Child> children;
        children.reserve(ready.size());
        for (int v : ready) {
            const int64_t run = std::max(sim_.stepBytes(v), peak), after = sim_.bytesAfter(v);
            // A node that frees at least what it keeps and fits under the peak so far can run now:
            // moving it to the front of any completion lowers no later step (see docs/memory.md).
            if (run == peak && after <= sim_.live) {
                children.assign(1, {run, after, v});
                break;
            }
            children.push_back({run, after, v});
        }
        std::sort(children.begin(), children.end(), [](const Child& a, const Child& b) {
            return a.run != b.run ? a.run < b.run : a.after != b.after ? a.after < b.after : a.v < b.v;
        });
        for (const Child& c : children) {
            if (c.run >= incumbent_) break;
            const size_t lv = static_cast<size_t>(local_[static_cast<size_t>(c.v)]);
            std::vector<int> next;
            next.reserve(ready.size() + 2);
            for (int r : ready)
                if (r != c.v) next.push_back(r);
            sim_.apply(c.v);
            for (int s : sim_.p.succs[static_cast<size_t>(c.v)])
                if (sim_.waiting[static_cast<size_t>(s)] == 0 && local_[static_cast<size_t>(s)] >= 0) next.push_back(s);
            key_[lv / 64] ^= uint64_t{1} << (lv % 64);
            path_.push_back(c.v);
            dfs(next, c.run);
            path_.pop_back();
            key_[lv / 64] ^= uint64_t{1} << (lv % 64);
            sim_.undo(c.v);
            if (stop_) return;
        }
    }

    Simulator& sim_;
    const std::vector<int>& nodes_;
    std::vector<int> local_;
    std::vector<uint64_t> key_;
    std::unordered_map<std::vector<uint64_t>, int64_t, KeyHash> memo_;
    std::vector<int> path_, best_;
    int64_t incumbent_, target_, cap_;
    bool capped_ = false, reachedTarget_ = false, stop_ = false;
};

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

ScheduleRun searchOrder(const Problem& p, const SearchOptions& options, const std::vector<int>& incumbent) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!isTopological(p, incumbent)) throw Error(ErrorKind::BadInput, "search: the starting order is not topological");
    ScheduleRun run;
    run.name = "search";
    const Cuts cuts = findCuts(p);
    const AnyOrderBound bound = anyOrderBound(p);
    // Sources right before their first reader: every segment then holds exactly its own nodes.
    const std::vector<int> start = delaySources(p, incumbent);
    std::vector<int64_t> stepOf(p.size(), 0), perStep;
    if (simulatePeak(p, start, &perStep) > simulatePeak(p, incumbent))
        throw Error(ErrorKind::CheckFailed, "moving sources next to their readers raised the peak");
    for (size_t i = 0; i < start.size(); ++i) stepOf[static_cast<size_t>(start[i])] = perStep[i];

    // Segments: consecutive runs of the order, each ending at a cut node.
    std::vector<char> isCut(p.size(), 0);
    if (options.segment)
        for (int c : cuts.cutNodes) isCut[static_cast<size_t>(c)] = 1;
    std::vector<std::vector<int>> segments(1);
    for (int v : start) {
        segments.back().push_back(v);
        if (isCut[static_cast<size_t>(v)]) segments.emplace_back();
    }
    if (segments.back().empty()) segments.pop_back();
    run.segments = static_cast<int>(segments.size());
    struct SegmentResult {
        int64_t greedy = 0, bound = 0, peak = 0;
        bool proven = false;
    };
    std::vector<SegmentResult> results(segments.size());
    int64_t floor = 0;  // a lower bound on the whole optimum
    for (size_t s = 0; s < segments.size(); ++s) {
        run.largestSegment = std::max(run.largestSegment, segments[s].size());
        for (int v : segments[s]) {
            results[s].greedy = std::max(results[s].greedy, stepOf[static_cast<size_t>(v)]);
            results[s].bound = std::max(results[s].bound, bound.perNode[static_cast<size_t>(v)]);
        }
        results[s].peak = results[s].greedy;
        floor = std::max(floor, results[s].bound);
    }
    // Highest greedy peak first: each proven optimum raises the floor the others need to reach.
    std::vector<size_t> byPeak(segments.size());
    for (size_t s = 0; s < byPeak.size(); ++s) byPeak[s] = s;
    std::stable_sort(byPeak.begin(), byPeak.end(), [&](size_t a, size_t b) { return results[a].greedy > results[b].greedy; });
    std::vector<size_t> firstIndex(segments.size(), 0);
    for (size_t s = 1; s < segments.size(); ++s) firstIndex[s] = firstIndex[s - 1] + segments[s - 1].size();
    const int64_t words = static_cast<int64_t>((run.largestSegment + 63) / 64);
    int64_t statesLeft = std::min(options.stateCap, kMemoBytesLimit / (words * 8 + kMemoEntryOverhead));
    for (size_t s : byPeak) {
        auto& r = results[s];
        if (r.greedy <= std::max(floor, r.bound)) {
            r.proven = r.greedy <= r.bound;
            continue;  // already as low as the whole order can go
        }
        if (segments[s].size() > options.maxSegmentNodes) {
            run.fallback = "a segment of " + std::to_string(segments[s].size()) + " nodes is above the search limit of " +
                           std::to_string(options.maxSegmentNodes) + "; kept the best greedy order there";
            continue;
        }
        if (statesLeft <= 0) {
            run.fallback = "state cap reached; kept the best greedy order in the remaining segments";
            continue;
        }
        ++run.segmentsSearched;
        // Everything before the segment has run (the live set then does not depend on the order).
        Simulator sim(p);
        for (size_t i = 0; i < firstIndex[s]; ++i) sim.apply(start[i]);
        SegmentSearch search(sim, segments[s], r.greedy, std::max(floor, r.bound), statesLeft);
        if (search.run()) {
            segments[s] = search.best();
            r.peak = search.peak();
        }
        run.statesExplored += search.states();
        statesLeft -= search.states();
        if (search.capped()) {
            run.fallback = "state cap of " + std::to_string(std::min(options.stateCap, kMemoBytesLimit / (words * 8 + kMemoEntryOverhead))) +
                           " reached in a segment of " + std::to_string(segments[s].size()) + " nodes; kept the best order found";
            continue;
        }
        r.proven = !search.reachedTarget() || r.peak <= r.bound;
        if (r.proven) floor = std::max(floor, r.peak);
    }
    for (const auto& seg : segments) run.order.insert(run.order.end(), seg.begin(), seg.end());
    if (!isTopological(p, run.order)) throw Error(ErrorKind::CheckFailed, "search produced an order that is not topological");
    run.peakBytes = simulatePeak(p, run.order);
    bool allResolved = true;
    for (const auto& r : results) allResolved = allResolved && (r.proven || r.peak <= floor);
    run.optimal = run.peakBytes <= bound.bytes || (allResolved && run.peakBytes <= floor);
    if (run.optimal) run.fallback.clear();
    else if (run.fallback.empty()) run.fallback = "not proven optimal";
    run.ms = msSince(t0);
    return run;
}

const std::vector<std::string>& schedulerNames() {
    static const std::vector<std::string> names = {"exporter", "dfs", "lpmf", "bfs", "size-dfs", "greedy", "search", "best"};
    return names;
}

ScheduleRun runScheduler(const Problem& p, const std::string& name, const SearchOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    auto single = [&](const std::string& n, std::vector<int> order) {
        ScheduleRun r;
        r.name = n;
        r.order = std::move(order);
        r.peakBytes = simulatePeak(p, r.order);
        r.ms = msSince(t0);
        return r;
    };
    auto bestOf = [&](const std::string& n, const std::vector<std::string>& members) {
        ScheduleRun best;
        for (const auto& m : members) {
            ScheduleRun r = runScheduler(p, m, options);
            if (best.name.empty() || r.peakBytes < best.peakBytes) best = std::move(r);
        }
        best.name = n + " (" + best.name + ")";
        best.ms = msSince(t0);
        return best;
    };
    ScheduleRun r;
    if (name == "exporter") r = single(name, exporterOrder(p));
    else if (name == "dfs") r = single(name, reverseDfsOrder(p));
    else if (name == "lpmf") r = single(name, lpmfOrder(p));
    else if (name == "bfs") r = single(name, bfsOrder(p));
    else if (name == "size-dfs") r = single(name, sizeDfsOrder(p));
    else if (name == "greedy") r = bestOf("greedy", {"lpmf", "bfs", "size-dfs"});
    else if (name == "search" || name == "best") {
        // The search starts from the best heuristic order; `best` is that same pick, so it is never
        // above exporter order.
        ScheduleRun start = bestOf("start", {"exporter", "dfs", "lpmf", "bfs", "size-dfs"});
        r = searchOrder(p, options, start.order);
        if (start.peakBytes < r.peakBytes) throw Error(ErrorKind::CheckFailed, "search ended above its starting order");
        if (name == "best") r.name = "best (search)";
        r.ms = msSince(t0);
    } else {
        throw Error(ErrorKind::BadInput, "unknown schedule '" + name + "' (exporter, dfs, lpmf, bfs, size-dfs, greedy, search, best)");
    }
    if (!isTopological(p, r.order)) throw Error(ErrorKind::CheckFailed, "schedule '" + name + "' is not a topological order");
    if (!r.optimal && name != "search" && name != "best") r.optimal = r.peakBytes <= anyOrderBound(p).bytes;
    return r;
}

}  // namespace passlens::schedule
