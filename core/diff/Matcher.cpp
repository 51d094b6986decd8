#include "diff/Matcher.h"

#include <algorithm>
#include <cmath>

namespace passlens::diff {

using namespace passlens::ir;

namespace {

constexpr size_t kMaxPropagationRounds = 64;
constexpr size_t kSimilarityWindow = 6;     ///< B candidates considered on each side, by position
constexpr double kMinSimilarity = 0.5;

/// Name → node, with kNone marking a name used more than once (ambiguous names never match).
std::unordered_map<std::string_view, NodeId> uniqueNames(const Graph& g) {
    std::unordered_map<std::string_view, NodeId> out;
    for (NodeId n : g.nodeOrder()) {
        const std::string& name = g.node(n).name;
        if (name.empty()) continue;
        auto [it, fresh] = out.emplace(name, n);
        if (!fresh) it->second = kNone;
    }
    return out;
}

/// Key → the one node having it, or kNone when several do.
using UniqueIndex = std::unordered_map<uint64_t, NodeId>;
void addUnique(UniqueIndex& index, uint64_t key, NodeId n) {
    auto [it, fresh] = index.emplace(key, n);
    if (!fresh && it->second != n) it->second = kNone;
}

}  // namespace

Matcher::Matcher(const GraphFacts& a, const GraphFacts& b, const CaptureNames& captures)
    : fa_(a), fb_(b), ga_(a.graph), gb_(b.graph), captures_(captures),
      bOfA_(ga_.nodeIdLimit(), kNone), aOfB_(gb_.nodeIdLimit(), kNone),
      how_(ga_.nodeIdLimit(), MatchHow::Name), score_(ga_.nodeIdLimit(), 0.0) {}

void Matcher::link(NodeId a, NodeId b, MatchHow how, double score) {
    bOfA_[a] = b;
    aOfB_[b] = a;
    how_[a] = how;
    score_[a] = std::clamp(score, 0.0, 1.0);
}

ValueId Matcher::mappedValue(ValueId va) const {
    if (va == kNone || fa_.constHash[va]) return kNone;
    const Value& v = ga_.value(va);
    if (const int pos = fa_.inputPosition[va]; pos >= 0) {
        if (static_cast<size_t>(pos) >= gb_.inputs().size()) return kNone;
        const ValueId vb = gb_.inputs()[pos];
        return fb_.constHash[vb] ? kNone : vb;
    }
    if (v.isOuterScope) {
        auto it = captures_.find(v.name);
        auto vb = gb_.findValue(it != captures_.end() ? it->second : v.name);
        return vb ? *vb : kNone;
    }
    if (v.producer == kNone || freeA(v.producer)) return kNone;
    const auto& outs = gb_.node(bOfA_[v.producer]).outputs;
    const int slot = fa_.outputSlot(va);
    return slot >= 0 && static_cast<size_t>(slot) < outs.size() ? outs[slot] : kNone;
}

Matcher::Slot Matcher::compareSlot(ValueId va, ValueId vb) const {
    if (va == kNone || vb == kNone) return va == vb ? Slot::Exact : Slot::Mismatch;
    const auto& ca = fa_.constHash[va];
    const auto& cb = fb_.constHash[vb];
    if (ca || cb) {
        if (!ca || !cb) return Slot::Mismatch;
        return *ca == *cb ? Slot::Exact : Slot::ConstDiffers;
    }
    if (const ValueId mapped = mappedValue(va); mapped != kNone) return mapped == vb ? Slot::Exact : Slot::Mismatch;
    // Unresolved on A's side: an interchangeable producer is as good as the one it will be matched
    // to, if B's producer is still free and computes the same thing.
    const NodeId pb = gb_.value(vb).producer;
    if (pb != kNone && !freeB(pb)) return Slot::Mismatch;
    return fa_.valuePrint[va] == fb_.valuePrint[vb] ? Slot::Exact : Slot::Mismatch;
}

Matcher::Fit Matcher::fit(NodeId a, NodeId b) const {
    const Node& na = ga_.node(a);
    const Node& nb = gb_.node(b);
    Fit f;
    if (na.inputs.size() != nb.inputs.size()) return f;
    int constDiffs = 0;
    for (size_t s = 0; s < na.inputs.size(); ++s) {
        const Slot slot = compareSlot(na.inputs[s], nb.inputs[s]);
        if (slot == Slot::Mismatch) return f;
        constDiffs += slot == Slot::ConstDiffers;
    }
    const bool sameAttrs = fa_.attrHash[a] == fb_.attrHash[b];
    f.viable = true;
    f.exact = constDiffs == 0 && sameAttrs;
    f.score = 1.0 - 0.15 * constDiffs - (sameAttrs ? 0.0 : 0.2);
    return f;
}

void Matcher::matchNames() {
    const auto namesA = uniqueNames(ga_), namesB = uniqueNames(gb_);
    for (NodeId a : fa_.topo) {
        const std::string& name = ga_.node(a).name;
        if (name.empty() || namesA.at(name) != a) continue;
        auto it = namesB.find(name);
        if (it == namesB.end() || it->second == kNone || !freeB(it->second)) continue;
        link(a, it->second, MatchHow::Name, fa_.opKey[a] == fb_.opKey[it->second] ? 1.0 : 0.7);
    }
    // Exporters that rename nodes often keep value names: match producers of the same first output.
    for (NodeId a : fa_.topo) {
        if (!freeA(a)) continue;
        const auto& outs = ga_.node(a).outputs;
        if (outs.empty() || outs[0] == kNone) continue;
        auto vb = gb_.findValue(ga_.value(outs[0]).name);
        if (!vb) continue;
        const NodeId b = gb_.value(*vb).producer;
        if (b == kNone || !freeB(b) || fa_.opKey[a] != fb_.opKey[b] || fb_.outputSlot(*vb) != 0) continue;
        link(a, b, MatchHow::Name, 0.9);
    }
}

void Matcher::matchWeights() {
    // Key: op + input slot + constant content; a Constant node: op + its value. Inside a body,
    // weights are often captures of the enclosing graph's initializers: keyed by the capture's
    // name on B's side (A's name mapped through the enclosing graph's matching).
    auto keysOf = [this](const GraphFacts& f, NodeId n, bool sideA, auto&& each) {
        const Node& node = f.graph.node(n);
        if (node.opType == "Constant" && node.domain.empty()) each(mixHash(f.opKey[n], f.attrHash[n]));
        for (size_t s = 0; s < node.inputs.size(); ++s) {
            const ValueId v = node.inputs[s];
            if (v == kNone) continue;
            const uint64_t slotKey = mixHash(f.opKey[n], s);
            if (f.constHash[v]) {
                each(mixHash(slotKey, *f.constHash[v]));
            } else if (const Value& val = f.graph.value(v); val.isOuterScope) {
                auto it = sideA ? captures_.find(val.name) : captures_.end();
                each(hashString(it != captures_.end() ? it->second : val.name, mixHash(slotKey, 0x0e)));
            }
        }
    };
    UniqueIndex indexA, indexB;
    for (NodeId a : fa_.topo) keysOf(fa_, a, true, [&](uint64_t k) { addUnique(indexA, k, a); });
    for (NodeId b : fb_.topo) keysOf(fb_, b, false, [&](uint64_t k) { addUnique(indexB, k, b); });
    for (NodeId a : fa_.topo) {
        keysOf(fa_, a, true, [&](uint64_t k) {
            if (!freeA(a) || indexA[k] != a) return;
            auto it = indexB.find(k);
            if (it == indexB.end() || it->second == kNone || !freeB(it->second)) return;
            link(a, it->second, MatchHow::Weights, fa_.attrHash[a] == fb_.attrHash[it->second] ? 1.0 : 0.9);
        });
    }
}

void Matcher::matchExactFingerprints() {
    UniqueIndex indexA, indexB;
    for (NodeId a : fa_.topo)
        if (freeA(a)) addUnique(indexA, fa_.nodePrint[a], a);
    for (NodeId b : fb_.topo)
        if (freeB(b)) addUnique(indexB, fb_.nodePrint[b], b);
    for (NodeId a : fa_.topo) {
        if (!freeA(a) || indexA[fa_.nodePrint[a]] != a) continue;
        auto it = indexB.find(fa_.nodePrint[a]);
        if (it != indexB.end() && it->second != kNone && freeB(it->second)) link(a, it->second, MatchHow::Structure, 1.0);
    }
}

bool Matcher::bottomUp(NodeId a) {
    // Anchor on the mapped input with the fewest readers in B: its readers are the candidates.
    const Node& na = ga_.node(a);
    size_t anchorSlot = 0;
    ValueId anchor = kNone;
    for (size_t s = 0; s < na.inputs.size(); ++s) {
        const ValueId vb = mappedValue(na.inputs[s]);
        if (vb != kNone && (anchor == kNone || gb_.value(vb).consumers.size() < gb_.value(anchor).consumers.size())) {
            anchor = vb;
            anchorSlot = s;
        }
    }
    if (anchor == kNone) return false;
    NodeId best = kNone;
    size_t exact = 0, viable = 0;
    double bestScore = 0;
    std::vector<NodeId> readers = gb_.value(anchor).consumers;  // one entry per slot: dedupe
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    for (NodeId b : readers) {
        if (!freeB(b) || fa_.opKey[a] != fb_.opKey[b]) continue;
        const Node& nb = gb_.node(b);
        if (anchorSlot >= nb.inputs.size() || nb.inputs[anchorSlot] != anchor) continue;
        const Fit f = fit(a, b);
        if (!f.viable) continue;
        if (f.exact) {
            if (exact++ == 0) best = b, bestScore = 1.0;
        } else if (exact == 0) {
            ++viable;
            best = b;
            bestScore = f.score;
        }
    }
    // Several exact candidates: interchangeable nodes, left for their consumers to tell apart.
    if (exact == 1 || (exact == 0 && viable == 1)) {
        link(a, best, MatchHow::Structure, bestScore);
        return true;
    }
    return false;
}

bool Matcher::topDown(NodeId a) {
    const Node& na = ga_.node(a);
    std::vector<std::pair<NodeId, int>> votes;
    int readers = 0;
    auto vote = [&](ValueId vb, size_t slot) {
        if (vb == kNone) return;
        const NodeId pb = gb_.value(vb).producer;
        if (pb == kNone || !freeB(pb) || fb_.opKey[pb] != fa_.opKey[a] || fb_.outputSlot(vb) != static_cast<int>(slot)) return;
        auto it = std::find_if(votes.begin(), votes.end(), [&](const auto& v) { return v.first == pb; });
        if (it == votes.end()) votes.emplace_back(pb, 1);
        else ++it->second;
    };
    for (size_t k = 0; k < na.outputs.size(); ++k) {
        const ValueId va = na.outputs[k];
        if (va == kNone) continue;
        const Value& v = ga_.value(va);
        std::vector<NodeId> consumers = v.consumers;
        std::sort(consumers.begin(), consumers.end());
        consumers.erase(std::unique(consumers.begin(), consumers.end()), consumers.end());
        for (NodeId c : consumers) {
            const auto& ins = ga_.node(c).inputs;
            for (size_t s = 0; s < ins.size(); ++s) {
                if (ins[s] != va) continue;
                ++readers;
                if (freeA(c)) continue;
                const auto& insB = gb_.node(bOfA_[c]).inputs;
                if (s < insB.size()) vote(insB[s], k);
            }
        }
        if (v.isGraphOutput) {
            const auto& outsA = ga_.outputs();
            for (size_t i = 0; i < outsA.size(); ++i) {
                if (outsA[i] != va) continue;
                ++readers;
                if (i < gb_.outputs().size()) vote(gb_.outputs()[i], k);
            }
        }
    }
    if (votes.empty()) return false;
    std::sort(votes.begin(), votes.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
    if (votes.size() > 1 && votes[1].second == votes[0].second) return false;  // consumers disagree
    const NodeId b = votes[0].first;
    double score = static_cast<double>(votes[0].second) / std::max(readers, 1);
    if (fa_.attrHash[a] != fb_.attrHash[b]) score *= 0.8;
    if (fa_.inputTypesHash[a] != fb_.inputTypesHash[b]) score *= 0.9;
    link(a, b, MatchHow::Neighbors, score);
    return true;
}

size_t Matcher::propagate() {
    size_t total = 0;
    for (size_t round = 0; round < kMaxPropagationRounds; ++round) {
        size_t found = 0;
        for (NodeId a : fa_.topo)
            if (freeA(a)) found += bottomUp(a);
        for (auto it = fa_.topo.rbegin(); it != fa_.topo.rend(); ++it)
            if (freeA(*it)) found += topDown(*it);
        total += found;
        if (found == 0) break;
    }
    return total;
}

double Matcher::similarity(NodeId a, NodeId b) const {
    const Node& na = ga_.node(a);
    const Node& nb = gb_.node(b);
    double attrs = fa_.attrHash[a] == fb_.attrHash[b] ? 1.0 : 0.0;
    if (attrs == 0 && na.attributes.size() == nb.attributes.size()) {
        size_t sameNames = 0;
        for (const auto& x : na.attributes) sameNames += nb.attr(x.name) != nullptr;
        attrs = 0.5 * static_cast<double>(sameNames) / static_cast<double>(std::max<size_t>(na.attributes.size(), 1));
    }
    const double shapes = fa_.inputTypesHash[a] == fb_.inputTypesHash[b] ? 1.0 : 0.0;
    const double position = 1.0 - std::fabs(fa_.position[a] - fb_.position[b]);
    // Matched neighbours that agree: producers of the same input slots.
    size_t known = 0, agree = 0;
    for (size_t s = 0; s < na.inputs.size(); ++s) {
        const ValueId va = na.inputs[s];
        if (va == kNone || ga_.value(va).producer == kNone || freeA(ga_.value(va).producer)) continue;
        ++known;
        agree += s < nb.inputs.size() && nb.inputs[s] != kNone && mappedValue(va) == nb.inputs[s];
    }
    const double neighbours = known ? static_cast<double>(agree) / static_cast<double>(known) : 0.0;
    return 0.3 * attrs + 0.2 * shapes + 0.2 * position + 0.3 * neighbours;
}

void Matcher::matchSimilar() {
    std::unordered_map<uint64_t, std::vector<NodeId>> freeByOpA, freeByOpB;
    for (NodeId a : fa_.topo)
        if (freeA(a)) freeByOpA[fa_.opKey[a]].push_back(a);
    for (NodeId b : fb_.topo)
        if (freeB(b)) freeByOpB[fb_.opKey[b]].push_back(b);
    struct Candidate {
        double score, distance;
        NodeId a, b;
    };
    std::vector<Candidate> candidates;
    for (const auto& [op, listA] : freeByOpA) {
        auto it = freeByOpB.find(op);
        if (it == freeByOpB.end()) continue;
        const auto& listB = it->second;  // in topological order, so sorted by position
        for (NodeId a : listA) {
            const double pa = fa_.position[a];
            const auto mid = std::lower_bound(listB.begin(), listB.end(), pa,
                                              [&](NodeId b, double p) { return fb_.position[b] < p; }) - listB.begin();
            const size_t lo = mid > static_cast<std::ptrdiff_t>(kSimilarityWindow) ? static_cast<size_t>(mid) - kSimilarityWindow : 0;
            const size_t hi = std::min(listB.size(), static_cast<size_t>(mid) + kSimilarityWindow);
            for (size_t j = lo; j < hi; ++j) {
                const double s = similarity(a, listB[j]);
                if (s >= kMinSimilarity) candidates.push_back({s, std::fabs(pa - fb_.position[listB[j]]), a, listB[j]});
            }
        }
    }
    std::sort(candidates.begin(), candidates.end(), [](const Candidate& x, const Candidate& y) {
        return x.score != y.score ? x.score > y.score : (x.distance != y.distance ? x.distance < y.distance : x.a < y.a);
    });
    for (const Candidate& c : candidates)
        if (freeA(c.a) && freeB(c.b)) link(c.a, c.b, MatchHow::Similarity, c.score);
}

void Matcher::run(const DiffOptions& options) {
    matchNames();
    if (options.namesOnly) return;
    matchWeights();
    matchExactFingerprints();
    propagate();
    // Similarity matches open new paths for propagation, which may in turn settle more nodes.
    for (int pass = 0; pass < 2; ++pass) {
        matchSimilar();
        if (propagate() == 0) break;
    }
}

}  // namespace passlens::diff
