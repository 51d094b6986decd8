#pragma once
// The node order of a Graph: a doubly linked list over node ids, each node carrying an order label
// (ranks with gaps, relabelled locally when a gap closes, as in order-maintenance structures), so
// insert, erase and move are O(1) amortized and "does a come before b" is one comparison.
// The flat id vector that Graph::nodeOrder() hands out is rebuilt lazily after an edit that is not
// an append; a copy always starts with it built, so snapshots read by other threads never rebuild.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/Ids.h"

namespace passlens::ir {

class NodeList {
public:
    NodeList() = default;
    NodeList(const NodeList& other);
    NodeList& operator=(const NodeList& other);
    NodeList(NodeList&&) noexcept = default;
    NodeList& operator=(NodeList&&) noexcept = default;

    void append(NodeId n);
    /// Links `n` in front of `before` (kNone appends).
    void insertBefore(NodeId n, NodeId before);
    void erase(NodeId n);
    /// Replaces the whole order (e.g. after a topological sort); `order` lists every linked node.
    void assign(const std::vector<NodeId>& order);

    bool contains(NodeId n) const { return n < linked_.size() && linked_[n]; }
    size_t size() const { return size_; }
    NodeId first() const { return head_; }
    NodeId last() const { return tail_; }
    NodeId next(NodeId n) const { return next_[n]; }
    NodeId prev(NodeId n) const { return prev_[n]; }
    /// True when `a` stands before `b` (both linked).
    bool precedes(NodeId a, NodeId b) const { return rank_[a] < rank_[b]; }
    /// The ids in list order.
    const std::vector<NodeId>& ids() const;
    /// Moves the id vector to a new buffer (Graph's reference checks: a walk over the old one fails loudly).
    void relocateIds() { std::vector<NodeId>(ids_).swap(ids_); }

private:
    void grow(NodeId n);
    void link(NodeId n, NodeId before);
    void unlink(NodeId n);
    void rankBetweenNeighbours(NodeId n);
    void relabelAround(NodeId n);
    void relabelAll();
    std::vector<NodeId> walk() const;

    std::vector<NodeId> prev_, next_;
    std::vector<uint64_t> rank_;
    std::vector<bool> linked_;
    NodeId head_ = kNone, tail_ = kNone;
    size_t size_ = 0;
    mutable std::vector<NodeId> ids_;
    mutable bool idsStale_ = false;
};

}  // namespace passlens::ir
