#include "schedule/Problem.h"

#include <algorithm>
#include <unordered_map>

#include "analysis/OpRegistry.h"
#include "ir/Error.h"

namespace passlens::schedule {

using ir::kNone;

void Problem::finish() {
    const size_t n = size();
    if (inplaceHosts.size() != n) inplaceHosts.resize(n);
    if (!nodes.empty() && nodes.size() != n) throw Error(ErrorKind::BadInput, "scheduling problem: node list and workspace differ in size");
    preds.assign(n, {});
    succs.assign(n, {});
    inputs.assign(n, {});
    outputs.assign(n, {});
    for (size_t t = 0; t < tensors.size(); ++t) {
        auto& ts = tensors[t];
        if (ts.producer < 0 || static_cast<size_t>(ts.producer) >= n || ts.bytes < 0)
            throw Error(ErrorKind::BadInput, "scheduling problem: tensor " + std::to_string(t) + " has no valid producer or size");
        std::sort(ts.readers.begin(), ts.readers.end());
        ts.readers.erase(std::unique(ts.readers.begin(), ts.readers.end()), ts.readers.end());
        outputs[static_cast<size_t>(ts.producer)].push_back(static_cast<int>(t));
        for (int r : ts.readers) {
            if (r < 0 || static_cast<size_t>(r) >= n || r == ts.producer)
                throw Error(ErrorKind::BadInput, "scheduling problem: tensor " + std::to_string(t) + " has a bad reader");
            inputs[static_cast<size_t>(r)].push_back(static_cast<int>(t));
            preds[static_cast<size_t>(r)].push_back(ts.producer);
            succs[static_cast<size_t>(ts.producer)].push_back(r);
        }
    }
    for (auto* lists : {&preds, &succs})
        for (auto& l : *lists) {
            std::sort(l.begin(), l.end());
            l.erase(std::unique(l.begin(), l.end()), l.end());
        }
    // A cycle leaves nodes that never become ready.
    std::vector<int> waiting(n);
    std::vector<int> ready;
    for (size_t v = 0; v < n; ++v)
        if ((waiting[v] = static_cast<int>(preds[v].size())) == 0) ready.push_back(static_cast<int>(v));
    size_t seen = 0;
    while (!ready.empty()) {
        int v = ready.back();
        ready.pop_back();
        ++seen;
        for (int s : succs[static_cast<size_t>(v)])
            if (--waiting[static_cast<size_t>(s)] == 0) ready.push_back(s);
    }
    if (seen != n) throw Error(ErrorKind::BadInput, "scheduling problem has a cycle; no schedule exists");
}

Problem buildProblem(const ir::Model& m, const ir::Graph& g) {
    const memory::Schedule exporter = memory::makeSchedule(g, memory::ScheduleKind::Model);
    const memory::MemoryPlan facts = memory::analyzeMemory(m, g, exporter);
    Problem p;
    p.nodes = exporter.order;
    const size_t n = p.nodes.size();
    p.workspace.assign(n, 0);
    p.inplaceHosts.assign(n, {});
    std::unordered_map<ir::ValueId, int64_t> bytesOf;  // planned (dynamic, sized) values only
    for (const auto& t : facts.lifetimes) {
        if (t.isWorkspace) p.workspace[static_cast<size_t>(t.first)] += t.bytes;
        else bytesOf[t.value] = t.bytes;
    }
    std::unordered_map<ir::ValueId, int> tensorOf;
    for (size_t i = 0; i < n; ++i)
        for (ir::ValueId v : g.node(p.nodes[i]).outputs) {
            if (v == kNone || tensorOf.count(v)) continue;
            tensorOf[v] = static_cast<int>(p.tensors.size());
            Problem::Tensor t;
            t.producer = static_cast<int>(i);
            auto b = bytesOf.find(v);
            t.bytes = b == bytesOf.end() ? 0 : b->second;
            p.tensors.push_back(std::move(t));
        }
    for (size_t i = 0; i < n; ++i)
        for (ir::ValueId v : g.readsOf(p.nodes[i])) {  // explicit inputs and subgraph captures
            auto it = tensorOf.find(v);
            if (v != kNone && it != tensorOf.end() && p.tensors[static_cast<size_t>(it->second)].producer != static_cast<int>(i))
                p.tensors[static_cast<size_t>(it->second)].readers.push_back(static_cast<int>(i));
        }
    // In-place hosts: the memory module's rule (Analysis.cpp), without its "dies at this step"
    // part, which depends on the order and is decided by the simulator.
    for (size_t i = 0; i < n; ++i) {
        const auto& node = g.node(p.nodes[i]);
        if (node.outputs.empty() || node.outputs[0] == kNone || !analysis::isInplaceElementwise(node.opType, node.domain)) continue;
        if (!bytesOf.count(node.outputs[0])) continue;
        const int out = tensorOf.at(node.outputs[0]);
        for (ir::ValueId in : node.inputs) {
            auto it = tensorOf.find(in);
            if (in == kNone || it == tensorOf.end() || !bytesOf.count(in)) continue;
            if (p.tensors[static_cast<size_t>(it->second)].bytes != p.tensors[static_cast<size_t>(out)].bytes ||
                g.value(in).type.elemType != g.value(node.outputs[0]).type.elemType)
                continue;
            auto& hosts = p.inplaceHosts[i];
            if (std::find(hosts.begin(), hosts.end(), it->second) == hosts.end()) hosts.push_back(it->second);
        }
    }
    p.finish();
    return p;
}

Simulator::Simulator(const Problem& problem) : p(problem) {
    remaining.resize(p.tensors.size());
    for (size_t t = 0; t < p.tensors.size(); ++t) remaining[t] = static_cast<int>(p.tensors[t].readers.size());
    waiting.resize(p.size());
    for (size_t v = 0; v < p.size(); ++v) waiting[v] = static_cast<int>(p.preds[v].size());
}

int64_t Simulator::stepBytes(int v) const {
    const size_t u = static_cast<size_t>(v);
    int64_t bytes = live + p.workspace[u];
    for (int t : p.outputs[u]) bytes += p.tensors[static_cast<size_t>(t)].bytes;
    // An in-place pair counts once at its hand-off step (memory::lowerBound's rule).
    for (int h : p.inplaceHosts[u])
        if (remaining[static_cast<size_t>(h)] == 1) {
            bytes -= p.tensors[static_cast<size_t>(h)].bytes;
            break;
        }
    return bytes;
}

int64_t Simulator::bytesAfter(int v) const {
    const size_t u = static_cast<size_t>(v);
    int64_t bytes = live;
    for (int t : p.outputs[u])
        if (!p.tensors[static_cast<size_t>(t)].readers.empty()) bytes += p.tensors[static_cast<size_t>(t)].bytes;
    for (int t : p.inputs[u])
        if (remaining[static_cast<size_t>(t)] == 1) bytes -= p.tensors[static_cast<size_t>(t)].bytes;
    return bytes;
}

void Simulator::apply(int v) {
    const size_t u = static_cast<size_t>(v);
    for (int t : p.outputs[u])
        if (!p.tensors[static_cast<size_t>(t)].readers.empty()) live += p.tensors[static_cast<size_t>(t)].bytes;
    for (int t : p.inputs[u])
        if (--remaining[static_cast<size_t>(t)] == 0) live -= p.tensors[static_cast<size_t>(t)].bytes;
    for (int s : p.succs[u]) --waiting[static_cast<size_t>(s)];
}

void Simulator::undo(int v) {
    const size_t u = static_cast<size_t>(v);
    for (int s : p.succs[u]) ++waiting[static_cast<size_t>(s)];
    for (int t : p.inputs[u])
        if (remaining[static_cast<size_t>(t)]++ == 0) live += p.tensors[static_cast<size_t>(t)].bytes;
    for (int t : p.outputs[u])
        if (!p.tensors[static_cast<size_t>(t)].readers.empty()) live -= p.tensors[static_cast<size_t>(t)].bytes;
}

int64_t simulatePeak(const Problem& p, const std::vector<int>& order, std::vector<int64_t>* perStep) {
    Simulator sim(p);
    int64_t peak = 0;
    if (perStep) perStep->clear();
    for (int v : order) {
        const int64_t b = sim.stepBytes(v);
        peak = std::max(peak, b);
        if (perStep) perStep->push_back(b);
        sim.apply(v);
    }
    return peak;
}

bool isTopological(const Problem& p, const std::vector<int>& order) {
    if (order.size() != p.size()) return false;
    std::vector<int> position(p.size(), -1);
    for (size_t i = 0; i < order.size(); ++i) {
        if (order[i] < 0 || static_cast<size_t>(order[i]) >= p.size() || position[static_cast<size_t>(order[i])] >= 0) return false;
        position[static_cast<size_t>(order[i])] = static_cast<int>(i);
    }
    for (size_t v = 0; v < p.size(); ++v)
        for (int q : p.preds[v])
            if (position[static_cast<size_t>(q)] > position[v]) return false;
    return true;
}

memory::Schedule toSchedule(const Problem& p, const std::vector<int>& order) {
    memory::Schedule s;
    s.order.reserve(order.size());
    for (int v : order) s.order.push_back(p.nodes.at(static_cast<size_t>(v)));
    return s;
}

}  // namespace passlens::schedule
