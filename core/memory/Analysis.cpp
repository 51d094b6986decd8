// From a graph snapshot to a lifetime set: schedule, sizes, static/dynamic classes, workspace,
// lifetimes (subgraph captures read at the owning node's step) and in-place candidates.
#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ir/Error.h"
#include "analysis/OpRegistry.h"
#include "memory/MemoryPlan.h"
#include "ir/CheckedMath.h"

namespace passlens::memory {

using ir::kNone;
using ir::NodeId;
using ir::ValueId;

std::optional<int64_t> tensorBytes(const ir::TypeInfo& t) {
    if (!t.isTensor() || !t.shape) return std::nullopt;
    size_t elem = ir::elementSize(t.elemType);
    if (elem == 0) return std::nullopt;
    if (!t.shape->isStatic()) return std::nullopt;
    return ir::checkedProduct(t.shape->staticDims(), static_cast<int64_t>(elem));
}

namespace {

/// Distinct values of this graph a node reads (explicit inputs and subgraph captures).
std::vector<ValueId> distinctReads(const ir::Graph& g, NodeId n) {
    auto reads = g.readsOf(n);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    reads.erase(std::remove(reads.begin(), reads.end(), kNone), reads.end());
    return reads;
}

bool isStaticValue(const ir::Graph& g, const ir::Value& v) {
    if (v.isConstant() || v.isGraphInput || v.isGraphOutput || v.isOuterScope) return true;
    return v.producer != kNone && g.node(v.producer).opType == "Constant" && g.node(v.producer).domain.empty();
}

/// Conv im2col workspace: C_in/group * kh * kw * H_out * W_out * 4 bytes for one image; none for a
/// 1x1 kernel with stride 1 and no padding (the input already is the column matrix).
std::optional<int64_t> convWorkspace(const ir::Graph& g, const ir::Node& n) {
    if (n.opType != "Conv" || !n.domain.empty() || n.inputs.size() < 2 || n.outputs.empty()) return 0;
    if (n.inputs[1] == kNone || n.outputs[0] == kNone) return 0;
    const auto& w = g.value(n.inputs[1]).type;
    const auto& y = g.value(n.outputs[0]).type;
    if (!w.shape || !y.shape || !w.shape->isStatic() || !y.shape->isStatic()) return std::nullopt;
    auto wd = w.shape->staticDims();
    auto yd = y.shape->staticDims();
    if (wd.size() < 3 || yd.size() != wd.size()) return std::nullopt;
    auto kernelSize = ir::checkedProduct({wd.begin() + 2, wd.end()});
    auto spatialSize = ir::checkedProduct({yd.begin() + 2, yd.end()});
    if (!kernelSize || !spatialSize) return std::nullopt;
    const int64_t kernel = *kernelSize, spatial = *spatialSize;
    auto strides = n.attrInts("strides");
    auto pads = n.attrInts("pads");
    auto dil = n.attrInts("dilations");
    bool unit = kernel == 1 && std::all_of(strides.begin(), strides.end(), [](int64_t s) { return s == 1; }) &&
                std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }) &&
                n.attrString("auto_pad", "NOTSET") != "SAME_UPPER" && n.attrString("auto_pad", "NOTSET") != "SAME_LOWER";
    (void)dil;
    if (unit) return 0;
    // W is [C_out, C_in/group, kh, kw]: wd[1] already is C_in/group.
    return ir::checkedProduct({wd[1], kernel, spatial}, 4);
}

}  // namespace

Schedule makeSchedule(const ir::Graph& g, ScheduleKind kind) {
    auto topo = g.topologicalOrder();
    if (!topo) throw Error(ErrorKind::BadInput, "graph '" + g.name + "' has a cycle; no schedule exists");
    if (kind == ScheduleKind::Model) {
        // Model order when it already is topological, else the stable topological order.
        std::unordered_set<ValueId> done;
        bool ok = true;
        for (NodeId n : g.nodeOrder()) {
            for (ValueId v : distinctReads(g, n))
                if (g.value(v).producer != kNone && !done.count(v)) ok = false;
            for (ValueId v : g.node(n).outputs)
                if (v != kNone) done.insert(v);
        }
        return Schedule{ok ? g.nodeOrder() : *topo};
    }
    // Memory-aware greedy: among ready nodes pick the one whose execution adds the fewest bytes
    // (outputs allocated minus inputs freed); unknown sizes count as 0 here (ordering only); ties
    // go to model order. Ready nodes wait in a heap keyed (delta, position); a delta only drops
    // (when a value's other readers have run, its last reader frees it), and then the node is
    // pushed again with the new key, its old entry skipped as stale: O(n log n).
    const auto& order = g.nodeOrder();
    const size_t limit = g.nodeIdLimit();
    std::vector<size_t> position(limit, 0);
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
    std::unordered_map<ValueId, int> remainingReaders;
    std::vector<int> pending(limit, 0);
    std::unordered_map<ValueId, std::vector<NodeId>> readers;
    std::vector<std::vector<ValueId>> reads(limit);
    for (NodeId n : order) {
        reads[n] = distinctReads(g, n);
        for (ValueId v : reads[n]) {
            ++remainingReaders[v];
            readers[v].push_back(n);
            if (g.value(v).producer != kNone) ++pending[n];
        }
    }
    auto bytesOf = [&](ValueId v) -> int64_t {
        const auto& val = g.value(v);
        if (isStaticValue(g, val)) return 0;
        return tensorBytes(val.type).value_or(0);
    };
    auto deltaOf = [&](NodeId n) {
        int64_t delta = 0;
        for (ValueId v : g.node(n).outputs)
            if (v != kNone) delta += bytesOf(v);
        for (ValueId v : reads[n])
            if (remainingReaders[v] == 1) delta -= bytesOf(v);
        return delta;
    };
    enum : uint8_t { kWaiting, kReady, kScheduled };
    std::vector<uint8_t> state(limit, kWaiting);
    std::vector<int64_t> currentDelta(limit, 0);
    using Entry = std::pair<int64_t, size_t>;  // (delta, position)
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    auto makeReady = [&](NodeId n) {
        state[n] = kReady;
        currentDelta[n] = deltaOf(n);
        ready.push({currentDelta[n], position[n]});
    };
    for (NodeId n : order)
        if (pending[n] == 0) makeReady(n);
    Schedule s;
    s.order.reserve(order.size());
    while (!ready.empty()) {
        auto [delta, pos] = ready.top();
        ready.pop();
        NodeId n = order[pos];
        if (state[n] != kReady || delta != currentDelta[n]) continue;  // stale entry
        state[n] = kScheduled;
        s.order.push_back(n);
        for (ValueId v : reads[n]) {
            if (--remainingReaders[v] != 1) continue;
            // One reader of v is left: running it frees v now, so its delta drops.
            for (NodeId r : readers[v])
                if (state[r] == kReady) {
                    int64_t d = deltaOf(r);
                    if (d != currentDelta[r]) {
                        currentDelta[r] = d;
                        ready.push({d, position[r]});
                    }
                }
        }
        for (ValueId v : g.node(n).outputs) {
            if (v == kNone) continue;
            auto it = readers.find(v);
            if (it == readers.end()) continue;
            for (NodeId c : it->second)
                if (--pending[c] == 0) makeReady(c);
        }
    }
    return s;
}

Reachability computeReachability(const ir::Graph& g, const Schedule& s) {
    size_t steps = s.order.size(), words = (steps + 63) / 64;
    const size_t matrixBytes = steps * words * sizeof(uint64_t);
    if (matrixBytes > kMaxReachabilityBytes)
        throw Error(ErrorKind::BadInput, "--parallel-aware needs a " + std::to_string(steps) + " x " + std::to_string(steps) +
                                             " step reachability matrix (" + std::to_string(matrixBytes >> 20) +
                                             " MiB), above the limit of " + std::to_string(kMaxReachabilityBytes >> 20) +
                                             " MiB; plan without --parallel-aware for a graph this large");
    std::unordered_map<NodeId, size_t> stepOf;
    for (size_t i = 0; i < steps; ++i) stepOf[s.order[i]] = i;
    Reachability r;
    r.bits.assign(steps, std::vector<uint64_t>(words, 0));
    // Reverse schedule order: a node reaches its readers and everything they reach.
    for (size_t i = steps; i-- > 0;) {
        for (ValueId v : g.node(s.order[i]).outputs) {
            if (v == kNone) continue;
            for (NodeId c : g.value(v).consumers) {
                auto it = stepOf.find(c);
                if (it == stepOf.end()) continue;
                size_t j = it->second;
                r.bits[i][j / 64] |= uint64_t{1} << (j % 64);
                for (size_t w = 0; w < words; ++w) r.bits[i][w] |= r.bits[j][w];
            }
        }
    }
    // Subgraph captures: a node reading v through its body depends on v's producer too.
    for (size_t j = 0; j < steps; ++j) {
        if (!g.node(s.order[j]).hasSubgraphs()) continue;
        for (ValueId v : g.readsOf(s.order[j])) {
            if (v == kNone || g.value(v).producer == kNone) continue;
            size_t i = stepOf.at(g.value(v).producer);
            r.bits[i][j / 64] |= uint64_t{1} << (j % 64);
        }
    }
    // Close once more over captures (rare; a second pass in reverse order propagates them).
    bool anyCapture = false;
    for (NodeId n : s.order) anyCapture |= g.node(n).hasSubgraphs();
    for (size_t i = anyCapture ? steps : 0; i-- > 0;)
        for (size_t j = i + 1; j < steps; ++j)
            if ((r.bits[i][j / 64] >> (j % 64)) & 1u)
                for (size_t w = 0; w < words; ++w) r.bits[i][w] |= r.bits[j][w];
    return r;
}

MemoryPlan analyzeMemory(const ir::Model& m, const ir::Graph& g, const Schedule& s) {
    (void)m;
    MemoryPlan plan;
    std::unordered_map<NodeId, int> stepOf;
    for (size_t i = 0; i < s.order.size(); ++i) {
        stepOf[s.order[i]] = static_cast<int>(i);
        plan.scheduleNames.push_back(g.node(s.order[i]).displayName());
    }
    // Last reading step of every value (captures count at the owning node's step).
    std::unordered_map<ValueId, std::vector<int>> readSteps;
    for (size_t i = 0; i < s.order.size(); ++i)
        for (ValueId v : distinctReads(g, s.order[i])) readSteps[v].push_back(static_cast<int>(i));

    // Static memory, each value counted once.
    for (ValueId v : g.valueIds()) {
        const auto& val = g.value(v);
        if (val.isOuterScope) continue;
        bool isConstNode = val.producer != kNone && !val.isConstant() && isStaticValue(g, val) && !val.isGraphOutput;
        if (!val.isConstant() && !val.isGraphInput && !val.isGraphOutput && !isConstNode) continue;
        if (val.isConstant() && val.initializer) {
            // Payload size is known even when value_info is missing.
            int64_t b = static_cast<int64_t>(val.initializer->byteSize());
            plan.parameterBytes += b;
            plan.staticBytes += b;
            continue;
        }
        auto b = tensorBytes(val.type);
        if (!b) {
            plan.unknownSizeValues.push_back(val.name);
            continue;
        }
        if (val.isGraphOutput) plan.outputBytes += *b;
        else if (val.isGraphInput) plan.inputBytes += *b;
        else plan.constantBytes += *b;
        plan.staticBytes += *b;
    }

    // Dynamic: activations produced by scheduled nodes, then per-op workspace.
    std::vector<TensorLifetime>& ts = plan.lifetimes;
    std::unordered_map<ValueId, int> indexOf;
    for (size_t i = 0; i < s.order.size(); ++i) {
        const auto& n = g.node(s.order[i]);
        for (ValueId v : n.outputs) {
            if (v == kNone) continue;  // omitted optional output
            const auto& val = g.value(v);
            if (isStaticValue(g, val)) continue;
            auto b = tensorBytes(val.type);
            if (!b) {
                plan.unknownSizeValues.push_back(val.name);
                continue;
            }
            TensorLifetime t;
            t.value = v;
            t.name = val.name;
            t.bytes = *b;
            t.first = static_cast<int>(i);
            t.last = t.first;
            if (auto it = readSteps.find(v); it != readSteps.end()) {
                t.readers = it->second;
                for (int r : t.readers) t.last = std::max(t.last, r);
            }
            indexOf[v] = static_cast<int>(ts.size());
            ts.push_back(std::move(t));
        }
    }
    // In-place candidates: output 0 of an elementwise op over an input dying at this step, same
    // size and element type, read by nothing else at this step.
    for (size_t i = 0; i < s.order.size(); ++i) {
        const auto& n = g.node(s.order[i]);
        if (n.outputs.empty() || n.outputs[0] == kNone || !analysis::isInplaceElementwise(n.opType, n.domain)) continue;
        auto out = indexOf.find(n.outputs[0]);
        if (out == indexOf.end()) continue;
        auto& t = ts[static_cast<size_t>(out->second)];
        for (ValueId in : n.inputs) {
            auto it = indexOf.find(in);
            if (it == indexOf.end()) continue;
            const auto& h = ts[static_cast<size_t>(it->second)];
            if (h.last != t.first || h.bytes != t.bytes || g.value(in).type.elemType != g.value(n.outputs[0]).type.elemType)
                continue;
            if (std::find(t.inplaceCandidates.begin(), t.inplaceCandidates.end(), it->second) == t.inplaceCandidates.end())
                t.inplaceCandidates.push_back(it->second);
        }
    }
    for (size_t i = 0; i < s.order.size(); ++i) {
        const auto& n = g.node(s.order[i]);
        auto w = convWorkspace(g, n);
        if (!w) {
            plan.unknownSizeValues.push_back(n.displayName() + ":workspace");
            continue;
        }
        if (*w == 0) continue;
        TensorLifetime t;
        t.name = n.displayName() + ":workspace";
        t.bytes = *w;
        t.first = t.last = static_cast<int>(i);
        t.isWorkspace = true;
        plan.workspaceBytes += *w;
        ts.push_back(std::move(t));
    }
    plan.naiveBytes = naiveTotal(ts);
    plan.dynamicBytes = plan.naiveBytes;
    plan.lowerBoundBytes = lowerBound(ts, &plan.liveBytesPerStep);
    plan.liveBytesPerStep.resize(s.order.size(), 0);
    return plan;
}

MemoryPlan planMemory(const ir::Model& m, const ir::Graph& g, const PlanOptions& options) {
    Schedule s = makeSchedule(g, options.schedule);
    MemoryPlan plan = analyzeMemory(m, g, s);
    Reachability reach;
    PlanConstraints c;
    if (options.parallelAware) {
        reach = computeReachability(g, s);
        c.parallelAware = &reach;
    }
    MemoryPlan arena = planLifetimes(plan.lifetimes, options.planner, c);
    plan.planner = arena.planner;
    plan.arenaBytes = arena.arenaBytes;
    plan.buffers = std::move(arena.buffers);
    plan.parallelAware = options.parallelAware;
    return plan;
}

}  // namespace passlens::memory
