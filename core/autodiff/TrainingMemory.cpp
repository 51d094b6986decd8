#include "autodiff/TrainingMemory.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

namespace passlens::autodiff {

using namespace passlens::ir;

bool isTrainingGraph(const Graph& g) {
    for (NodeId n : g.nodeOrder())
        if (provenanceOf(g.node(n)).role == Role::Backward) return true;
    return false;
}

std::string phaseOf(const Node& n) { return std::string(roleName(provenanceOf(n).role)); }

size_t plannedBufferCount(const memory::MemoryPlan& plan) {
    std::set<int64_t> offsets;
    for (const auto& b : plan.buffers) offsets.insert(b.offset);
    return offsets.size();
}

Model forwardPartOf(const Model& training) {
    Model m = training;
    Graph& g = m.graph;
    std::vector<NodeId> order = g.nodeOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (provenanceOf(g.node(*it)).role != Role::Forward) g.eraseNode(*it);
    std::vector<ValueId> outs;
    for (ValueId v : g.outputs()) {
        const Value& val = g.value(v);
        if (val.producer != kNone || val.isGraphInput || val.isConstant()) outs.push_back(v);
    }
    g.setOutputs(outs);
    // Initializers only the backward graph read (its constants) are no parameters of the model.
    for (ValueId v : std::vector<ValueId>(g.initializerOrder()))
        if (g.value(v).consumers.empty() && !g.value(v).isGraphOutput && !g.value(v).isGraphInput) g.setInitializer(v, nullptr);
    return m;
}

TrainingMemory analyzeTrainingMemory(const Model& m, const memory::MemoryPlan& plan, const memory::PlanOptions& options) {
    const Graph& g = m.graph;
    TrainingMemory t;
    const memory::Schedule s = memory::makeSchedule(g, options.schedule);
    std::vector<Role> stepRole;
    for (size_t i = 0; i < s.order.size(); ++i) {
        const Node& n = g.node(s.order[i]);
        Role r = provenanceOf(n).role;
        stepRole.push_back(r);
        t.stepPhases.emplace_back(roleName(r));
        if (r != Role::Forward && t.phaseBoundaryStep < 0) t.phaseBoundaryStep = static_cast<int>(i);
        if (r == Role::Forward && !(n.opType == "Constant" && n.domain.empty())) ++t.forwardNodes;
    }
    for (const auto& b : plan.buffers) {
        BufferPhase p;
        // A workspace lives at its node's step alone.
        const NodeId producer = b.value == kNone ? s.order[static_cast<size_t>(b.first)] : g.value(b.value).producer;
        const Role role = producer == kNone ? Role::Forward : provenanceOf(g.node(producer)).role;
        p.phase = std::string(roleName(role));
        if (role == Role::Forward && b.value != kNone) {
            std::vector<NodeId> readers = g.value(b.value).consumers;
            std::sort(readers.begin(), readers.end());
            readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
            for (NodeId r : readers) {
                Role rr = provenanceOf(g.node(r)).role;
                if (rr == Role::Backward || rr == Role::Recompute) p.savedFor.push_back(g.node(r).displayName());
            }
            if (!p.savedFor.empty()) {
                ++t.savedActivations.count;
                t.savedActivations.bytes += b.bytes;
            }
        }
        if (role == Role::Backward) {
            ++t.gradientBuffers.count;
            t.gradientBuffers.bytes += b.bytes;
        } else if (role == Role::Recompute) {
            ++t.recomputeBuffers.count;
            t.recomputeBuffers.bytes += b.bytes;
        }
        t.buffers.push_back(std::move(p));
    }
    for (ValueId v : g.outputs()) {
        const Value& val = g.value(v);
        if (val.producer == kNone || provenanceOf(g.node(val.producer)).role != Role::Backward) continue;
        ++t.gradientOutputs.count;
        t.gradientOutputs.bytes += memory::tensorBytes(val.type).value_or(0);
    }
    t.parameterBytes = plan.parameterBytes;
    t.peakBytes = plan.arenaBytes;
    if (!plan.liveBytesPerStep.empty()) {
        auto it = std::max_element(plan.liveBytesPerStep.begin(), plan.liveBytesPerStep.end());
        t.peakStep = static_cast<int>(it - plan.liveBytesPerStep.begin());
        if (static_cast<size_t>(t.peakStep) < t.stepPhases.size()) t.peakPhase = t.stepPhases[static_cast<size_t>(t.peakStep)];
    }
    t.naiveBuffers = plan.lifetimes.size();
    t.plannedBuffers = plannedBufferCount(plan);
    t.naiveBytes = plan.naiveBytes;

    const Model forward = forwardPartOf(m);
    const memory::MemoryPlan inf = memory::planMemory(forward, forward.graph, options);
    t.inference.naiveBuffers = inf.lifetimes.size();
    t.inference.plannedBuffers = plannedBufferCount(inf);
    t.inference.naiveBytes = inf.naiveBytes;
    t.inference.arenaBytes = inf.arenaBytes;
    return t;
}

namespace {
double ratioOf(int64_t a, int64_t b) { return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b); }
nlohmann::ordered_json countJson(const ByteCount& c) { return {{"count", c.count}, {"bytes", c.bytes}}; }
}  // namespace

void addTrainingToJson(nlohmann::ordered_json& j, const TrainingMemory& t) {
    auto& buffers = j["buffers"];
    for (size_t i = 0; i < buffers.size() && i < t.buffers.size(); ++i) {
        buffers[i]["phase"] = t.buffers[i].phase;
        if (t.buffers[i].phase == "forward") buffers[i]["saved_for"] = t.buffers[i].savedFor;
    }
    nlohmann::ordered_json tr;
    tr["forward_nodes"] = t.forwardNodes;
    tr["phase_boundary_step"] = t.phaseBoundaryStep;
    tr["activations_saved"] = countJson(t.savedActivations);
    tr["gradient_buffers"] = countJson(t.gradientBuffers);
    tr["gradient_outputs"] = countJson(t.gradientOutputs);
    tr["recompute_buffers"] = countJson(t.recomputeBuffers);
    tr["parameters_static_bytes"] = t.parameterBytes;
    tr["peak_bytes"] = t.peakBytes;
    tr["peak_step"] = t.peakStep;
    tr["peak_phase"] = t.peakPhase;
    tr["buffers_naive"] = t.naiveBuffers;
    tr["buffers_planned"] = t.plannedBuffers;
    tr["buffers_naive_per_forward_node"] = ratioOf(static_cast<int64_t>(t.naiveBuffers), static_cast<int64_t>(t.forwardNodes));
    tr["saving"] = ratioOf(t.naiveBytes, t.peakBytes);
    tr["inference"] = {{"buffers_naive", t.inference.naiveBuffers},
                       {"buffers_planned", t.inference.plannedBuffers},
                       {"naive_bytes", t.inference.naiveBytes},
                       {"arena_bytes", t.inference.arenaBytes},
                       {"saving", ratioOf(t.inference.naiveBytes, t.inference.arenaBytes)}};
    j["training"] = std::move(tr);
}

std::string trainingToText(const TrainingMemory& t) {
    std::ostringstream o;
    char buf[512];
    o << "training graph: " << t.forwardNodes << " forward nodes; backward from step " << t.phaseBoundaryStep << "\n";
    o << "  saved for backward: " << t.savedActivations.count << " activations, " << t.savedActivations.bytes << " bytes\n";
    o << "  gradients:          " << t.gradientBuffers.count << " buffers (" << t.gradientBuffers.bytes << " bytes), "
      << t.gradientOutputs.count << " outputs (" << t.gradientOutputs.bytes << " bytes, static)\n";
    if (t.recomputeBuffers.count)
        o << "  recomputed:         " << t.recomputeBuffers.count << " buffers, " << t.recomputeBuffers.bytes << " bytes\n";
    o << "  parameters:         " << t.parameterBytes << " bytes (static)\n";
    std::snprintf(buf, sizeof buf, "  buffers:            %zu naive (%.2f per forward node), %zu planned\n", t.naiveBuffers,
                  ratioOf(static_cast<int64_t>(t.naiveBuffers), static_cast<int64_t>(t.forwardNodes)), t.plannedBuffers);
    o << buf;
    std::snprintf(buf, sizeof buf, "  in-place + sharing: %.2fx in training (peak %lld at step %d, %s), %.2fx in inference (%zu -> %zu buffers)\n",
                  ratioOf(t.naiveBytes, t.peakBytes), static_cast<long long>(t.peakBytes), t.peakStep, t.peakPhase.c_str(),
                  ratioOf(t.inference.naiveBytes, t.inference.arenaBytes), t.inference.naiveBuffers, t.inference.plannedBuffers);
    o << buf;
    return o.str();
}

}  // namespace passlens::autodiff
