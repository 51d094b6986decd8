// The planners work on lifetime sets alone: in-place chains are merged into items first, then an
// item gets one offset in the arena. Every plan is validated before it is returned.
#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>

#include "ir/Error.h"
#include "memory/IntervalIndex.h"
#include "memory/MemoryPlan.h"

namespace passlens::memory {

namespace {

/// One arena slot: a tensor, or a chain of tensors each overwriting the previous in place.
struct Item {
    int64_t size = 0;
    int first = 0, last = 0;
    std::vector<int> members;  ///< chain order: members[k] overwrites members[k-1]
};

/// host[t] = the tensor t overwrites in place, or -1. Chooses, for each tensor, its first listed
/// candidate that is still free (a buffer hands itself over to one successor only).
std::vector<int> chooseInplace(const std::vector<TensorLifetime>& ts, const PlanConstraints& c);

bool mayFollow(const std::vector<TensorLifetime>& ts, int earlier, int later, const Reachability& r) {
    const auto& e = ts[static_cast<size_t>(earlier)];
    int start = ts[static_cast<size_t>(later)].first;
    if (e.readers.empty()) return r.reaches(e.first, start);
    for (int rd : e.readers)
        if (!r.reaches(rd, start)) return false;
    return true;
}

std::vector<int> chooseInplace(const std::vector<TensorLifetime>& ts, const PlanConstraints& c) {
    std::vector<int> host(ts.size(), -1);
    std::vector<bool> handedOver(ts.size(), false);
    for (size_t t = 0; t < ts.size(); ++t)
        for (int cand : ts[t].inplaceCandidates) {
            const auto& h = ts[static_cast<size_t>(cand)];
            if (handedOver[static_cast<size_t>(cand)] || h.bytes != ts[t].bytes || h.last != ts[t].first ||
                h.first >= ts[t].first)
                continue;  // a host is produced strictly earlier, so chains never loop
            if (c.parallelAware && !mayFollow(ts, cand, static_cast<int>(t), *c.parallelAware)) continue;
            host[t] = cand;
            handedOver[static_cast<size_t>(cand)] = true;
            break;
        }
    return host;
}

std::vector<Item> makeItems(const std::vector<TensorLifetime>& ts, const std::vector<int>& host) {
    // Follow each chain from its root (a tensor that overwrites nobody).
    std::vector<int> successor(ts.size(), -1);
    for (size_t t = 0; t < ts.size(); ++t)
        if (host[t] >= 0) successor[static_cast<size_t>(host[t])] = static_cast<int>(t);
    std::vector<Item> items;
    for (size_t t = 0; t < ts.size(); ++t) {
        if (host[t] >= 0) continue;
        Item it;
        it.first = ts[t].first;
        it.last = ts[t].last;
        for (int m = static_cast<int>(t); m >= 0; m = successor[static_cast<size_t>(m)]) {
            const auto& tm = ts[static_cast<size_t>(m)];
            it.members.push_back(m);
            it.size = std::max(it.size, tm.bytes);
            it.first = std::min(it.first, tm.first);
            it.last = std::max(it.last, tm.last);
        }
        items.push_back(std::move(it));
    }
    return items;
}

int stepCount(const std::vector<Item>& items) {
    int steps = 0;
    for (const auto& it : items) steps = std::max(steps, it.last + 1);
    return steps;
}

struct Placer {
    const std::vector<TensorLifetime>& ts;
    const std::vector<Item>& items;
    const PlanConstraints& c;
    std::vector<int64_t> offset = std::vector<int64_t>(items.size(), 0);
    std::vector<size_t> placed;
    /// Placed items by lifetime. Without the parallel-aware rule only items live at the same time
    /// conflict, and the index finds exactly those; with it, any placed item may conflict.
    IntervalIndex live{stepCount(items)};

    bool mayShare(const Item& a, const Item& b) const {
        if (!c.parallelAware) return true;
        const Item& e = a.last < b.first ? a : b;
        const Item& l = a.last < b.first ? b : a;
        for (int m : e.members)
            if (!mayFollow(ts, m, l.members.front(), *c.parallelAware)) return false;
        return true;
    }
    bool conflict(const Item& a, const Item& b) const {
        if (a.first <= b.last && b.first <= a.last) return true;
        return !mayShare(a, b);
    }
    /// TFLite's best fit: the smallest gap between conflicting placed items that fits, else the
    /// end of the highest conflicting one. Places item i there.
    void placeBestFit(size_t i) {
        std::vector<std::pair<int64_t, int64_t>> taken;
        auto consider = [&](size_t p) {
            if (items[p].size > 0 && conflict(items[i], items[p])) taken.push_back({offset[p], offset[p] + items[p].size});
        };
        if (c.parallelAware) {
            for (size_t p : placed) consider(p);
        } else {
            live.forEachOverlapping(items[i].first, items[i].last, consider);
        }
        std::sort(taken.begin(), taken.end());
        int64_t size = items[i].size, end = 0, best = -1, bestGap = INT64_MAX;
        for (auto [lo, hi] : taken) {
            if (lo - end >= size && lo - end < bestGap) {
                best = end;
                bestGap = lo - end;
            }
            end = std::max(end, hi);
        }
        offset[i] = best >= 0 ? best : end;
        placed.push_back(i);
        live.insert(i, items[i].first, items[i].last);
    }
};

std::vector<int64_t> planCumulative(const std::vector<Item>& items) {
    std::vector<int64_t> offset(items.size());
    int64_t at = 0;
    for (size_t i = 0; i < items.size(); ++i) {
        offset[i] = at;
        at += items[i].size;
    }
    return offset;
}

/// MXNet/NNVM-style sharing: walk items by start step; reuse the best-fitting freed buffer
/// (smallest that is big enough, else grow the largest free one; ties to the older buffer), else
/// open a new buffer. Freed buffers sit in a set ordered by (size, index), so each item costs
/// O(log n); the parallel-aware rule (a pairwise test) scans the freed buffers instead.
std::vector<int64_t> planShare(const Placer& pl) {
    const auto& items = pl.items;
    std::vector<size_t> byStart(items.size());
    std::iota(byStart.begin(), byStart.end(), 0);
    std::stable_sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) { return items[a].first < items[b].first; });
    struct Buffer { int64_t size; size_t occupant; };
    std::vector<Buffer> buffers;
    std::vector<size_t> bufferOf(items.size());
    using Busy = std::pair<int, size_t>;  // (occupant's last step, buffer)
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::set<std::pair<int64_t, size_t>> freed;  // (size, buffer)
    for (size_t i : byStart) {
        const Item& it = items[i];
        while (!busy.empty() && busy.top().first < it.first) {
            freed.insert({buffers[busy.top().second].size, busy.top().second});
            busy.pop();
        }
        int chosen = -1;
        if (!pl.c.parallelAware) {
            auto fit = freed.lower_bound({it.size, 0});
            if (fit == freed.end() && !freed.empty()) fit = freed.lower_bound({std::prev(freed.end())->first, 0});
            if (fit != freed.end()) chosen = static_cast<int>(fit->second);
        } else {
            int fit = -1, largest = -1;
            for (auto [size, b] : freed) {
                if (!pl.mayShare(items[buffers[b].occupant], it)) continue;
                if (size >= it.size && (fit < 0 || size < buffers[static_cast<size_t>(fit)].size)) fit = static_cast<int>(b);
                if (largest < 0 || size > buffers[static_cast<size_t>(largest)].size) largest = static_cast<int>(b);
            }
            chosen = fit >= 0 ? fit : largest;
        }
        if (chosen < 0) {
            buffers.push_back({it.size, i});
            bufferOf[i] = buffers.size() - 1;
        } else {
            auto& b = buffers[static_cast<size_t>(chosen)];
            freed.erase({b.size, static_cast<size_t>(chosen)});
            b.size = std::max(b.size, it.size);
            b.occupant = i;
            bufferOf[i] = static_cast<size_t>(chosen);
        }
        busy.push({it.last, bufferOf[i]});
    }
    std::vector<int64_t> start(buffers.size());
    int64_t at = 0;
    for (size_t b = 0; b < buffers.size(); ++b) {
        start[b] = at;
        at += buffers[b].size;
    }
    std::vector<int64_t> offset(items.size());
    for (size_t i = 0; i < items.size(); ++i) offset[i] = start[bufferOf[i]];
    return offset;
}

enum class SizeOrder { Size, Area, Start };

/// TFLite greedy by size: largest first, each at the best-fitting gap among conflicting items.
/// `best` also tries two other visiting orders (size x duration; by start step) as its local
/// improvement step: same placement rule, different order, keep whichever is smallest.
std::vector<int64_t> planGreedySize(Placer& pl, SizeOrder how = SizeOrder::Size) {
    const auto& items = pl.items;
    std::vector<size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    auto area = [&](size_t i) { return items[i].size * (items[i].last - items[i].first + 1); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (how == SizeOrder::Area && area(a) != area(b)) return area(a) > area(b);
        if (how == SizeOrder::Start && items[a].first != items[b].first) return items[a].first < items[b].first;
        if (items[a].size != items[b].size) return items[a].size > items[b].size;
        return items[a].first < items[b].first;
    });
    for (size_t i : order) pl.placeBestFit(i);
    return pl.offset;
}

/// TFLite greedy by breadth: visit steps from the most to the least live bytes; place that step's
/// unplaced items largest first.
std::vector<int64_t> planGreedyBreadth(Placer& pl) {
    const auto& items = pl.items;
    int steps = 0;
    for (const auto& it : items) steps = std::max(steps, it.last + 1);
    std::vector<std::vector<size_t>> liveAt(static_cast<size_t>(steps));
    std::vector<int64_t> liveBytes(static_cast<size_t>(steps), 0);
    for (size_t i = 0; i < items.size(); ++i)
        for (int s = items[i].first; s <= items[i].last; ++s) {
            liveAt[static_cast<size_t>(s)].push_back(i);
            liveBytes[static_cast<size_t>(s)] += items[i].size;
        }
    std::vector<size_t> stepOrder(static_cast<size_t>(steps));
    std::iota(stepOrder.begin(), stepOrder.end(), 0);
    std::stable_sort(stepOrder.begin(), stepOrder.end(), [&](size_t a, size_t b) { return liveBytes[a] > liveBytes[b]; });
    std::vector<bool> done(items.size(), false);
    for (size_t s : stepOrder) {
        auto here = liveAt[s];
        std::stable_sort(here.begin(), here.end(), [&](size_t a, size_t b) { return items[a].size > items[b].size; });
        for (size_t i : here) {
            if (done[i]) continue;
            pl.placeBestFit(i);
            done[i] = true;
        }
    }
    return pl.offset;
}

MemoryPlan toPlan(const std::vector<TensorLifetime>& ts, const std::vector<Item>& items, const std::vector<int>& host,
                  const std::vector<int64_t>& offset, std::string name) {
    MemoryPlan plan;
    plan.planner = std::move(name);
    plan.buffers.resize(ts.size());
    for (size_t i = 0; i < items.size(); ++i) {
        plan.arenaBytes = std::max(plan.arenaBytes, offset[i] + items[i].size);
        for (int m : items[i].members) {
            const auto& t = ts[static_cast<size_t>(m)];
            auto& b = plan.buffers[static_cast<size_t>(m)];
            b.value = t.value;
            b.name = t.name;
            b.offset = offset[i];
            b.bytes = t.bytes;
            b.first = t.first;
            b.last = t.last;
            b.inplaceOfIndex = host[static_cast<size_t>(m)];
            if (b.inplaceOfIndex >= 0) b.inplaceOf = ts[static_cast<size_t>(b.inplaceOfIndex)].value;
        }
    }
    return plan;
}

MemoryPlan runOne(const std::vector<TensorLifetime>& ts, const std::string& planner, const PlanConstraints& c) {
    const bool inplace = planner != "naive" && planner.find("-no-inplace") == std::string::npos;
    std::vector<int> host = inplace ? chooseInplace(ts, c) : std::vector<int>(ts.size(), -1);
    std::vector<Item> items = makeItems(ts, host);
    Placer pl{ts, items, c};
    std::vector<int64_t> offset;
    if (planner == "naive" || planner == "inplace") offset = planCumulative(items);
    else if (planner == "share") offset = planShare(pl);
    else if (planner.rfind("greedy-size", 0) == 0) offset = planGreedySize(pl);
    else if (planner.rfind("greedy-area", 0) == 0) offset = planGreedySize(pl, SizeOrder::Area);
    else if (planner.rfind("greedy-start", 0) == 0) offset = planGreedySize(pl, SizeOrder::Start);
    else if (planner.rfind("greedy-breadth", 0) == 0) offset = planGreedyBreadth(pl);
    else throw Error(ErrorKind::BadInput, "unknown planner '" + planner + "' (naive, inplace, share, greedy-size, greedy-breadth, best)");
    return toPlan(ts, items, host, offset, planner);
}

/// True when two buffers live at the same step overlap in the arena other than as an allowed
/// in-place hand-off. Sweeps the schedule with the live buffers ordered by offset: live buffers
/// never overlap except hand-off pairs (same offset and size), so a new buffer only needs its
/// neighbours by offset. O(n log n).
bool liveBuffersCollide(const std::vector<TensorLifetime>& ts, const std::vector<BufferAssignment>& bs) {
    std::vector<size_t> byFirst, byLast;
    for (size_t i = 0; i < bs.size(); ++i)
        if (bs[i].bytes > 0) byFirst.push_back(i);
    byLast = byFirst;
    std::sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) { return bs[a].first < bs[b].first; });
    std::sort(byLast.begin(), byLast.end(), [&](size_t a, size_t b) { return bs[a].last < bs[b].last; });
    auto handOff = [&](size_t from, size_t to) {
        return bs[to].inplaceOfIndex == static_cast<int>(from) && ts[from].last == ts[to].first &&
               bs[from].offset == bs[to].offset && bs[from].bytes == bs[to].bytes;
    };
    std::multimap<int64_t, size_t> live;  // offset → buffer
    std::vector<std::multimap<int64_t, size_t>::iterator> where(bs.size());
    size_t nextIn = 0, nextOut = 0;
    while (nextIn < byFirst.size()) {
        const int step = bs[byFirst[nextIn]].first;
        // Buffers whose last step is before this one are gone; ones ending here still overlap.
        for (; nextOut < byLast.size() && bs[byLast[nextOut]].last < step; ++nextOut) live.erase(where[byLast[nextOut]]);
        for (; nextIn < byFirst.size() && bs[byFirst[nextIn]].first == step; ++nextIn) {
            const size_t i = byFirst[nextIn];
            const int64_t lo = bs[i].offset, hi = lo + bs[i].bytes;
            auto collides = [&](size_t j) {
                return bs[j].offset < hi && lo < bs[j].offset + bs[j].bytes && !handOff(i, j) && !handOff(j, i);
            };
            auto it = live.lower_bound(lo);
            if (it != live.begin()) {
                // The nearest lower offset: every live buffer there has the same extent.
                const int64_t below = std::prev(it)->first;
                for (auto b = live.lower_bound(below); b != it; ++b)
                    if (collides(b->second)) return true;
            }
            for (; it != live.end() && it->first < hi; ++it)
                if (collides(it->second)) return true;
            where[i] = live.emplace(lo, i);
        }
    }
    return false;
}

}  // namespace

const std::vector<std::string>& plannerNames() {
    static const std::vector<std::string> names = {"naive", "inplace", "share", "greedy-size", "greedy-breadth", "best"};
    return names;
}

int64_t naiveTotal(const std::vector<TensorLifetime>& tensors) {
    int64_t sum = 0;
    for (const auto& t : tensors) sum += t.bytes;
    return sum;
}

/// The most bytes the items keep live at one step: no planner placing these items goes below it.
static int64_t peakLiveOfItems(const std::vector<Item>& items, std::vector<int64_t>* perStep) {
    int steps = 0;
    for (const auto& it : items) steps = std::max(steps, it.last + 1);
    std::vector<int64_t> diff(static_cast<size_t>(steps) + 1, 0);
    for (const auto& it : items) {
        diff[static_cast<size_t>(it.first)] += it.size;
        diff[static_cast<size_t>(it.last) + 1] -= it.size;
    }
    std::vector<int64_t> live(static_cast<size_t>(steps), 0);
    int64_t at = 0, best = 0;
    for (size_t s = 0; s < live.size(); ++s) {
        at += diff[s];
        live[s] = at;
        best = std::max(best, at);
    }
    if (perStep) *perStep = std::move(live);
    return best;
}

int64_t lowerBound(const std::vector<TensorLifetime>& tensors, std::vector<int64_t>* perStep) {
    return peakLiveOfItems(makeItems(tensors, chooseInplace(tensors, {})), perStep);
}

MemoryPlan planLifetimes(const std::vector<TensorLifetime>& tensors, const std::string& planner,
                         const PlanConstraints& constraints) {
    for (const auto& t : tensors)
        if (t.first > t.last || t.first < 0 || t.bytes < 0)
            throw Error(ErrorKind::BadInput, "tensor '" + t.name + "' has an invalid lifetime or size");
    MemoryPlan plan;
    if (planner == "best") {
        // Every planner, with and without in-place for the offset planners, plus the two extra
        // greedy visiting orders (local improvement); the smallest wins.
        // A planner is skipped when the best so far already sits at the live-bytes peak of that
        // planner's items (with or without in-place chains): it could only tie, and ties keep the
        // earlier plan, so the result is the same as running all of them.
        const int64_t floorInplace = peakLiveOfItems(makeItems(tensors, chooseInplace(tensors, constraints)), nullptr);
        const int64_t floorSeparate = peakLiveOfItems(makeItems(tensors, std::vector<int>(tensors.size(), -1)), nullptr);
        for (const char* p : {"naive", "inplace", "share", "greedy-size", "greedy-breadth", "greedy-size-no-inplace",
                              "greedy-breadth-no-inplace", "greedy-area", "greedy-area-no-inplace", "greedy-start",
                              "greedy-start-no-inplace"}) {
            const std::string name = p;
            const bool inplace = name != "naive" && name.find("-no-inplace") == std::string::npos;
            if (!plan.planner.empty() && plan.arenaBytes <= (inplace ? floorInplace : floorSeparate)) continue;
            MemoryPlan candidate = runOne(tensors, p, constraints);
            if (plan.planner.empty() || candidate.arenaBytes < plan.arenaBytes) plan = std::move(candidate);
        }
        plan.planner = "best (" + plan.planner + ")";
    } else {
        plan = runOne(tensors, planner, constraints);
    }
    if (auto problem = validatePlan(tensors, plan.buffers, plan.arenaBytes, constraints))
        throw Error(ErrorKind::CheckFailed, "planner '" + planner + "' produced an invalid plan: " + *problem);
    plan.naiveBytes = naiveTotal(tensors);
    plan.dynamicBytes = plan.naiveBytes;
    plan.lowerBoundBytes = lowerBound(tensors, &plan.liveBytesPerStep);
    plan.parallelAware = constraints.parallelAware != nullptr;
    return plan;
}

std::optional<std::string> validatePlan(const std::vector<TensorLifetime>& ts, const std::vector<BufferAssignment>& bs,
                                        int64_t arenaBytes, const PlanConstraints& c) {
    if (bs.size() != ts.size()) return "plan has " + std::to_string(bs.size()) + " buffers for " + std::to_string(ts.size()) + " tensors";
    for (size_t i = 0; i < ts.size(); ++i) {
        const auto& b = bs[i];
        if (b.bytes != ts[i].bytes || b.first != ts[i].first || b.last != ts[i].last)
            return "buffer of '" + ts[i].name + "' does not match its lifetime";
        if (b.offset < 0 || b.offset + b.bytes > arenaBytes) return "buffer of '" + ts[i].name + "' lies outside the arena";
        if (b.inplaceOfIndex >= 0) {
            const auto& cands = ts[i].inplaceCandidates;
            if (std::find(cands.begin(), cands.end(), b.inplaceOfIndex) == cands.end())
                return "'" + ts[i].name + "' is in place of a tensor the rule does not allow";
        }
    }
    if (!c.parallelAware && !liveBuffersCollide(ts, bs)) return std::nullopt;
    // Sweep by offset so only address-overlapping pairs are compared (quadratic when many buffers
    // share an offset; reached only with the parallel-aware rule or to name a collision found above).
    std::vector<size_t> byOffset(ts.size());
    std::iota(byOffset.begin(), byOffset.end(), 0);
    std::sort(byOffset.begin(), byOffset.end(), [&](size_t a, size_t b) { return bs[a].offset < bs[b].offset; });
    for (size_t x = 0; x < byOffset.size(); ++x) {
        size_t i = byOffset[x];
        if (bs[i].bytes == 0) continue;
        for (size_t y = x + 1; y < byOffset.size() && bs[byOffset[y]].offset < bs[i].offset + bs[i].bytes; ++y) {
            size_t j = byOffset[y];
            if (bs[j].bytes == 0) continue;
            const auto &a = ts[i], &b = ts[j];
            bool timeOverlap = a.first <= b.last && b.first <= a.last;
            auto inplacePair = [&](size_t from, size_t to) {
                return bs[to].inplaceOfIndex == static_cast<int>(from) && ts[from].last == ts[to].first &&
                       bs[from].offset == bs[to].offset && bs[from].bytes == bs[to].bytes;
            };
            bool inplace = inplacePair(i, j) || inplacePair(j, i);
            if (timeOverlap && !inplace)
                return "'" + a.name + "' [" + std::to_string(a.first) + "," + std::to_string(a.last) + "] and '" + b.name +
                       "' [" + std::to_string(b.first) + "," + std::to_string(b.last) + "] are live together and overlap in the arena";
            if (c.parallelAware) {
                bool ordered = a.last <= b.first ? mayFollow(ts, static_cast<int>(i), static_cast<int>(j), *c.parallelAware)
                                                 : mayFollow(ts, static_cast<int>(j), static_cast<int>(i), *c.parallelAware);
                if (!ordered) return "'" + a.name + "' and '" + b.name + "' share memory but may run in parallel";
            }
        }
    }
    return std::nullopt;
}

}  // namespace passlens::memory
