// Facts that hold for every topological order: the any-order lower bound and the cut nodes.
#include <algorithm>

#include "schedule/Schedulers.h"

namespace passlens::schedule {

namespace {

/// The ancestor/descendant term costs n² bits per direction; above this many nodes only the
/// cut-node crossing term is computed.
constexpr size_t kMaxAncestorBitsNodes = 12000;

}  // namespace

bool isDelayableSource(const Problem& p, int v) {
    const size_t u = static_cast<size_t>(v);
    if (!p.preds[u].empty() || p.workspace[u] != 0 || p.succs[u].empty()) return false;
    // An output nobody reads lives only at the node's own step, which moving could raise.
    for (int t : p.outputs[u])
        if (p.tensors[static_cast<size_t>(t)].readers.empty() && p.tensors[static_cast<size_t>(t)].bytes > 0) return false;
    return true;
}

std::vector<int> delaySources(const Problem& p, const std::vector<int>& order) {
    std::vector<int> rest, result;
    std::vector<std::vector<int>> before(p.size());
    std::vector<char> placed(p.size(), 0);
    for (int v : order)
        if (!isDelayableSource(p, v)) rest.push_back(v);
    std::vector<int> position(p.size(), -1);
    for (size_t i = 0; i < rest.size(); ++i) position[static_cast<size_t>(rest[i])] = static_cast<int>(i);
    for (int v : order) {
        if (!isDelayableSource(p, v)) continue;
        int first = -1;
        for (int s : p.succs[static_cast<size_t>(v)])  // a source's readers are never sources
            if (first < 0 || position[static_cast<size_t>(s)] < position[static_cast<size_t>(first)]) first = s;
        before[static_cast<size_t>(first)].push_back(v);
    }
    result.reserve(order.size());
    for (int v : rest) {
        result.insert(result.end(), before[static_cast<size_t>(v)].begin(), before[static_cast<size_t>(v)].end());
        result.push_back(v);
    }
    return result;
}

Cuts findCuts(const Problem& p) {
    Cuts c;
    const size_t n = p.size();
    c.free.assign(n, false);
    for (size_t v = 0; v < n; ++v) c.free[v] = isDelayableSource(p, static_cast<int>(v));
    std::vector<int> order;
    for (int v : exporterOrder(p))
        if (!c.free[static_cast<size_t>(v)]) order.push_back(v);
    const size_t m = order.size();
    if (m <= kMaxAncestorBitsNodes) {
        // Exact: a node is a cut when its ancestors and descendants are all the other nodes.
        std::vector<int> local(n, -1);
        for (size_t i = 0; i < m; ++i) local[static_cast<size_t>(order[i])] = static_cast<int>(i);
        const size_t words = (m + 63) / 64;
        std::vector<uint64_t> anc(m * words, 0), desc(m * words, 0);
        for (size_t i = 0; i < m; ++i)
            for (int q : p.preds[static_cast<size_t>(order[i])]) {
                const int lq = local[static_cast<size_t>(q)];
                if (lq < 0) continue;
                for (size_t w = 0; w < words; ++w) anc[i * words + w] |= anc[static_cast<size_t>(lq) * words + w];
                anc[i * words + static_cast<size_t>(lq) / 64] |= uint64_t{1} << (lq % 64);
            }
        for (size_t i = m; i-- > 0;)
            for (int s : p.succs[static_cast<size_t>(order[i])]) {
                const int ls = local[static_cast<size_t>(s)];
                for (size_t w = 0; w < words; ++w) desc[i * words + w] |= desc[static_cast<size_t>(ls) * words + w];
                desc[i * words + static_cast<size_t>(ls) / 64] |= uint64_t{1} << (ls % 64);
            }
        for (size_t i = 0; i < m; ++i) {
            size_t related = 0;
            for (size_t w = 0; w < words; ++w)
                related += static_cast<size_t>(__builtin_popcountll(anc[i * words + w]) + __builtin_popcountll(desc[i * words + w]));
            if (related + 1 == m) c.cutNodes.push_back(order[i]);
        }
        return c;
    }
    // Very large graphs, conservatively: a node is a cut when no edge jumps over it, no node
    // before it is a sink (every one reaches it) and none after it is a source.
    std::vector<int> pos(n, -1);
    for (size_t i = 0; i < m; ++i) pos[static_cast<size_t>(order[i])] = static_cast<int>(i);
    std::vector<int> jumped(m + 1, 0);
    size_t firstSink = m, lastSource = 0;
    for (size_t i = 0; i < m; ++i) {
        const size_t v = static_cast<size_t>(order[i]);
        bool source = true;
        for (int q : p.preds[v]) source = source && c.free[static_cast<size_t>(q)];
        if (source) lastSource = i;
        if (p.succs[v].empty()) firstSink = std::min(firstSink, i);
        for (int s : p.succs[v]) {
            const int j = pos[static_cast<size_t>(s)];
            if (j > static_cast<int>(i) + 1) {
                ++jumped[i + 1];
                --jumped[static_cast<size_t>(j)];
            }
        }
    }
    int covering = 0;
    for (size_t i = 0; i < m; ++i) {
        covering += jumped[i];
        if (covering == 0 && i <= firstSink && i >= lastSource) c.cutNodes.push_back(order[i]);
    }
    return c;
}

AnyOrderBound anyOrderBound(const Problem& p) {
    AnyOrderBound b;
    const size_t n = p.size();
    b.perNode.assign(n, 0);
    for (size_t v = 0; v < n; ++v) {
        // Inputs and outputs are live while v runs; at most one input is overwritten in place.
        int64_t bytes = p.workspace[v], host = 0;
        for (int t : p.inputs[v]) bytes += p.tensors[static_cast<size_t>(t)].bytes;
        for (int t : p.outputs[v]) bytes += p.tensors[static_cast<size_t>(t)].bytes;
        for (int h : p.inplaceHosts[v]) host = std::max(host, p.tensors[static_cast<size_t>(h)].bytes);
        b.perNode[v] = bytes - host;
        b.workingSetBytes = std::max(b.workingSetBytes, b.perNode[v]);
    }
    const std::vector<int> order = exporterOrder(p);
    if (n <= kMaxAncestorBitsNodes) {
        // A tensor produced by an ancestor of v and read by a descendant of v is live at v.
        b.ancestorTerm = true;
        const size_t words = (n + 63) / 64;
        std::vector<uint64_t> anc(n * words, 0), desc(n * words, 0);
        auto set = [&](std::vector<uint64_t>& m, size_t row, size_t bit) { m[row * words + bit / 64] |= uint64_t{1} << (bit % 64); };
        for (int v : order)
            for (int q : p.preds[static_cast<size_t>(v)]) {
                for (size_t w = 0; w < words; ++w) anc[static_cast<size_t>(v) * words + w] |= anc[static_cast<size_t>(q) * words + w];
                set(anc, static_cast<size_t>(v), static_cast<size_t>(q));
            }
        for (size_t i = order.size(); i-- > 0;) {
            const size_t v = static_cast<size_t>(order[i]);
            for (int s : p.succs[v]) {
                for (size_t w = 0; w < words; ++w) desc[v * words + w] |= desc[static_cast<size_t>(s) * words + w];
                set(desc, v, static_cast<size_t>(s));
            }
        }
        std::vector<uint64_t> mask(words);
        for (const auto& t : p.tensors) {
            if (t.bytes == 0 || t.readers.empty()) continue;
            std::fill(mask.begin(), mask.end(), 0);
            for (int r : t.readers)
                for (size_t w = 0; w < words; ++w) mask[w] |= anc[static_cast<size_t>(r) * words + w];
            for (size_t w = 0; w < words; ++w) mask[w] &= desc[static_cast<size_t>(t.producer) * words + w];
            for (int r : t.readers) mask[static_cast<size_t>(r) / 64] &= ~(uint64_t{1} << (r % 64));
            for (size_t w = 0; w < words; ++w)
                for (uint64_t bits = mask[w]; bits; bits &= bits - 1)
                    b.perNode[w * 64 + static_cast<size_t>(__builtin_ctzll(bits))] += t.bytes;
        }
    } else {
        // Only at cut nodes: everything produced before and read after is live there.
        std::vector<int> pos(n, 0);
        for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = static_cast<int>(i);
        const Cuts cuts = findCuts(p);
        std::vector<char> isCut(n, 0);
        for (int c : cuts.cutNodes) isCut[static_cast<size_t>(c)] = 1;
        std::vector<int64_t> diff(n + 1, 0);  // over positions: live strictly between producer and last reader
        for (const auto& t : p.tensors) {
            if (t.bytes == 0 || t.readers.empty()) continue;
            int last = 0;
            for (int r : t.readers) last = std::max(last, pos[static_cast<size_t>(r)]);
            const int from = pos[static_cast<size_t>(t.producer)] + 1;
            if (from >= last) continue;
            diff[static_cast<size_t>(from)] += t.bytes;
            diff[static_cast<size_t>(last)] -= t.bytes;
        }
        int64_t crossing = 0;
        for (size_t i = 0; i < order.size(); ++i) {
            crossing += diff[i];
            const size_t v = static_cast<size_t>(order[i]);
            if (!isCut[v]) continue;
            // Inputs of the cut are already in its working set.
            int64_t inputs = 0;
            for (int t : p.inputs[v]) {
                const auto& ts = p.tensors[static_cast<size_t>(t)];
                int last = 0;
                for (int r : ts.readers) last = std::max(last, pos[static_cast<size_t>(r)]);
                if (last > static_cast<int>(i) && pos[static_cast<size_t>(ts.producer)] < static_cast<int>(i)) inputs += ts.bytes;
            }
            b.perNode[v] += crossing - inputs;
        }
    }
    for (size_t v = 0; v < n; ++v)
        if (b.perNode[v] > b.bytes || b.node < 0) {
            b.bytes = b.perNode[v];
            b.node = static_cast<int>(v);
        }
    return b;
}

}  // namespace passlens::schedule
