// Repeated blocks in an op-kind sequence: the period with the most self-matches, then the longest
// mismatch-free run at that period, aligned where block boundaries cut the fewest live values.
#include <algorithm>
#include <limits>

#include "hierarchy/Hierarchy.h"

namespace passlens::hierarchy {

std::optional<RepeatedRun> findRepeatedBlocks(const std::vector<uint32_t>& t, size_t minPeriod, size_t maxPeriod,
                                              const std::vector<uint32_t>* cutCost) {
    const size_t n = t.size();
    if (minPeriod == 0) minPeriod = 1;
    if (n < 3 * minPeriod) return std::nullopt;
    maxPeriod = std::min(maxPeriod, n / 3);
    // Self-match ratio per period: O(n · maxPeriod) comparisons of small ints.
    std::vector<double> ratio(maxPeriod + 1, 0.0);
    for (size_t p = 1; p <= maxPeriod; ++p) {
        size_t same = 0;
        for (size_t i = 0; i + p < n; ++i) same += t[i] == t[i + p];
        ratio[p] = double(same) / double(n - p);
        // A sequence that repeats with a tiny period is a uniform chain, not a stack of layers.
        if (p < minPeriod && ratio[p] >= 0.9) return std::nullopt;
    }
    double best = 0;
    for (size_t p = minPeriod; p <= maxPeriod; ++p) best = std::max(best, ratio[p]);
    if (best < 0.5) return std::nullopt;
    // The smallest period nearly as good as the best: multiples of a layer match as well as it.
    size_t period = 0;
    for (size_t p = minPeriod; p <= maxPeriod && !period; ++p)
        if (ratio[p] >= 0.97 * best) period = p;
    // Longest run of i with t[i] == t[i + period].
    size_t runStart = 0, runLen = 0;
    for (size_t i = 0; i + period < n;) {
        if (t[i] != t[i + period]) { ++i; continue; }
        size_t j = i;
        while (j + period < n && t[j] == t[j + period]) ++j;
        if (j - i > runLen) { runLen = j - i; runStart = i; }
        i = j;
    }
    const size_t regionLen = runLen + period;  // tokens covered by identical blocks
    if (regionLen / period < 3) return std::nullopt;
    // Alignment: the offset whose boundaries cut the fewest live values on average; more blocks
    // win near-ties (a value that dies in the last block lowers one boundary, not the layering).
    RepeatedRun bestRun;
    double bestCost = std::numeric_limits<double>::infinity();
    for (size_t o = 0; o < period; ++o) {
        const size_t count = (regionLen - o) / period;
        if (count < 3) break;
        double cost = 0;
        if (cutCost)
            for (size_t k = 0; k <= count; ++k) cost += (*cutCost)[runStart + o + k * period];
        cost /= double(count + 1);
        constexpr double kTie = 0.25;
        const bool better = cost < bestCost - kTie || (cost <= bestCost + kTie && count > bestRun.count) ||
                            (cost < bestCost && count == bestRun.count);
        if (better) {
            bestCost = cost;
            bestRun = {runStart + o, period, count};
        }
    }
    if (bestRun.count < 3) return std::nullopt;
    return bestRun;
}

}  // namespace passlens::hierarchy
