#pragma once
// Placed items by lifetime [first, last] over schedule steps, answering "which placed items are
// live at some step of [a, b]" in O((k + 1) log steps) for k answers: a segment tree over start
// steps whose nodes hold the latest end step below them, so only subtrees holding an overlapping
// item are entered. Lets the offset planners test conflicts without scanning everything placed.
#include <cstddef>
#include <utility>
#include <vector>

namespace passlens::memory {

class IntervalIndex {
public:
    explicit IntervalIndex(int steps) {
        while (leaves_ < steps) leaves_ *= 2;
        maxLast_.assign(static_cast<size_t>(2 * leaves_), -1);
        startingAt_.resize(static_cast<size_t>(leaves_));
    }

    void insert(size_t item, int first, int last) {
        startingAt_[static_cast<size_t>(first)].push_back({last, item});
        for (size_t node = static_cast<size_t>(first + leaves_); node >= 1; node /= 2)
            if (maxLast_[node] < last) maxLast_[node] = last;
    }

    /// Calls f(item) once for every inserted item with first <= b and last >= a.
    template <class F>
    void forEachOverlapping(int a, int b, F&& f) const {
        visit(1, 0, leaves_ - 1, a, b, f);
    }

private:
    template <class F>
    void visit(size_t node, int lo, int hi, int a, int b, F& f) const {
        if (lo > b || maxLast_[node] < a) return;
        if (lo == hi) {
            for (const auto& [last, item] : startingAt_[static_cast<size_t>(lo)])
                if (last >= a) f(item);
            return;
        }
        int mid = lo + (hi - lo) / 2;
        visit(2 * node, lo, mid, a, b, f);
        visit(2 * node + 1, mid + 1, hi, a, b, f);
    }

    int leaves_ = 1;
    std::vector<int> maxLast_;                                    ///< heap-ordered tree, -1 = empty
    std::vector<std::vector<std::pair<int, size_t>>> startingAt_;  ///< per start step: (last, item)
};

}  // namespace passlens::memory
