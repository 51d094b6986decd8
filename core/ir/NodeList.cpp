#include "ir/NodeList.h"

namespace passlens::ir {

namespace {
constexpr uint64_t kGap = uint64_t(1) << 32;     ///< label distance after a relabelling
constexpr uint64_t kMinGap = uint64_t(1) << 12;  ///< a local relabelling leaves at least this much
}  // namespace

NodeList::NodeList(const NodeList& o)
    : prev_(o.prev_), next_(o.next_), rank_(o.rank_), linked_(o.linked_), head_(o.head_), tail_(o.tail_),
      size_(o.size_), ids_(o.idsStale_ ? o.walk() : o.ids_), idsStale_(false) {}

NodeList& NodeList::operator=(const NodeList& o) {
    if (this != &o) {
        NodeList tmp(o);
        *this = std::move(tmp);
    }
    return *this;
}

void NodeList::grow(NodeId n) {
    if (n < prev_.size()) return;
    size_t want = std::max<size_t>(n + 1, prev_.size() * 2);
    prev_.resize(want, kNone);
    next_.resize(want, kNone);
    rank_.resize(want, 0);
    linked_.resize(want, false);
}

void NodeList::link(NodeId n, NodeId before) {
    grow(n);
    NodeId after = before == kNone ? tail_ : prev_[before];
    prev_[n] = after;
    next_[n] = before;
    (after == kNone ? head_ : next_[after]) = n;
    (before == kNone ? tail_ : prev_[before]) = n;
    linked_[n] = true;
    ++size_;
    rankBetweenNeighbours(n);
}

void NodeList::unlink(NodeId n) {
    NodeId p = prev_[n], q = next_[n];
    (p == kNone ? head_ : next_[p]) = q;
    (q == kNone ? tail_ : prev_[q]) = p;
    prev_[n] = next_[n] = kNone;
    linked_[n] = false;
    --size_;
}

void NodeList::append(NodeId n) {
    link(n, kNone);
    if (!idsStale_) ids_.push_back(n);
}

void NodeList::insertBefore(NodeId n, NodeId before) {
    link(n, before);
    if (before == kNone && !idsStale_) ids_.push_back(n);
    else idsStale_ = true;
}

void NodeList::erase(NodeId n) {
    if (!contains(n)) return;
    bool wasLast = n == tail_;
    unlink(n);
    if (wasLast && !idsStale_) ids_.pop_back();
    else idsStale_ = true;
}

void NodeList::assign(const std::vector<NodeId>& order) {
    for (NodeId n = head_; n != kNone;) {
        NodeId q = next_[n];
        prev_[n] = next_[n] = kNone;
        linked_[n] = false;
        n = q;
    }
    head_ = tail_ = kNone;
    size_ = 0;
    for (NodeId n : order) {
        grow(n);
        prev_[n] = tail_;
        (tail_ == kNone ? head_ : next_[tail_]) = n;
        tail_ = n;
        linked_[n] = true;
        ++size_;
    }
    relabelAll();
    ids_ = order;
    idsStale_ = false;
}

const std::vector<NodeId>& NodeList::ids() const {
    if (idsStale_) {
        ids_ = walk();
        idsStale_ = false;
    }
    return ids_;
}

std::vector<NodeId> NodeList::walk() const {
    std::vector<NodeId> out;
    out.reserve(size_);
    for (NodeId n = head_; n != kNone; n = next_[n]) out.push_back(n);
    return out;
}

void NodeList::rankBetweenNeighbours(NodeId n) {
    const NodeId p = prev_[n], q = next_[n];
    const uint64_t lo = p == kNone ? 0 : rank_[p];
    if (q == kNone) {
        rank_[n] = lo + kGap;
        return;
    }
    const uint64_t hi = rank_[q];
    if (hi - lo >= 2) rank_[n] = lo + (hi - lo) / 2;
    else relabelAround(n);
}

void NodeList::relabelAround(NodeId n) {
    // Widen a window around n (doubling its reach) until the labels bounding it leave kMinGap per
    // node, then spread the window's labels evenly. Reaching both ends relabels everything.
    NodeId left = n, right = n;
    size_t count = 1;
    for (size_t reach = 1;; reach *= 2) {
        for (size_t i = 0; i < reach && prev_[left] != kNone; ++i, ++count) left = prev_[left];
        for (size_t i = 0; i < reach && next_[right] != kNone; ++i, ++count) right = next_[right];
        const bool atHead = prev_[left] == kNone, atTail = next_[right] == kNone;
        if (atHead && atTail) {
            relabelAll();
            return;
        }
        const uint64_t base = atHead ? 0 : rank_[prev_[left]];
        const uint64_t top = atTail ? base + (count + 1) * kGap : rank_[next_[right]];
        const uint64_t step = (top - base) / (count + 1);
        if (step < kMinGap) continue;
        uint64_t r = base;
        for (NodeId x = left;; x = next_[x]) {
            r += step;
            rank_[x] = r;
            if (x == right) return;
        }
    }
}

void NodeList::relabelAll() {
    uint64_t r = 0;
    for (NodeId n = head_; n != kNone; n = next_[n]) rank_[n] = r += kGap;
}

}  // namespace passlens::ir
