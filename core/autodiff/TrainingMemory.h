#pragma once
// The memory plan of a training graph read through the autodiff provenance: which phase made each
// buffer (forward, loss, backward, recompute), which forward tensors are kept for the backward
// pass and by whom (`saved_for`), and the lecture's figures — buffers naive vs planned (the "2n"
// of an n-layer network) and the in-place + sharing saving in training next to the same model's
// inference plan.
//
//   auto plan = memory::planMemory(m, m.graph, options);
//   autodiff::TrainingMemory t = autodiff::analyzeTrainingMemory(m, plan, options);
//   auto j = memory::planToJson(plan); autodiff::addTrainingToJson(j, t);
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autodiff/Autodiff.h"
#include "memory/MemoryPlan.h"

namespace passlens::autodiff {

/// A graph is a training graph when some node says (provenance) it is a backward node.
bool isTrainingGraph(const ir::Graph& g);

/// "forward", "loss", "backward" or "recompute", from the node's provenance role.
std::string phaseOf(const ir::Node& n);

struct BufferPhase {
    std::string phase;                  ///< of the node that produced the buffer (workspace: its node)
    std::vector<std::string> savedFor;  ///< forward buffers: backward/recompute nodes that read them
};

struct ByteCount {
    size_t count = 0;
    int64_t bytes = 0;
};

/// The forward (inference) part of a training graph planned the same way, for comparison.
struct InferencePlanSummary {
    size_t naiveBuffers = 0, plannedBuffers = 0;
    int64_t naiveBytes = 0, arenaBytes = 0;
};

struct TrainingMemory {
    std::vector<BufferPhase> buffers;  ///< parallel to plan.buffers
    std::vector<std::string> stepPhases;  ///< per schedule step
    int phaseBoundaryStep = -1;        ///< first step that is not forward (loss or backward)
    size_t forwardNodes = 0;           ///< n: forward nodes other than Constant
    ByteCount savedActivations;        ///< forward buffers some backward node reads
    ByteCount gradientBuffers;         ///< dynamic buffers of backward nodes
    ByteCount gradientOutputs;         ///< `<name>_grad` graph outputs (static: handed to the caller)
    ByteCount recomputeBuffers;        ///< buffers of recomputed copies
    int64_t parameterBytes = 0;        ///< initializers (static)
    int64_t peakBytes = 0;             ///< the planned arena
    int peakStep = -1;                 ///< the step with the most live bytes
    std::string peakPhase;
    size_t naiveBuffers = 0;           ///< one buffer per dynamic tensor
    size_t plannedBuffers = 0;         ///< distinct arena offsets after in-place and sharing
    int64_t naiveBytes = 0;
    InferencePlanSummary inference;
};

/// Phases and the training summary of `plan` (made by memory::planMemory on `m.graph` with `options`).
TrainingMemory analyzeTrainingMemory(const ir::Model& m, const memory::MemoryPlan& plan,
                                     const memory::PlanOptions& options);

/// The forward part of a training model: loss, backward and recompute nodes removed, outputs = the
/// original outputs (those forward nodes, inputs or initializers produce).
ir::Model forwardPartOf(const ir::Model& training);

/// Distinct arena offsets of a plan (the buffers a runtime would allocate).
size_t plannedBufferCount(const memory::MemoryPlan& plan);

/// Adds `phase`/`saved_for` to every buffer of `planJson` (planToJson's output of the same plan)
/// and the `training` summary.
void addTrainingToJson(nlohmann::ordered_json& planJson, const TrainingMemory& t);
/// A few lines for `memplan` without --json.
std::string trainingToText(const TrainingMemory& t);

}  // namespace passlens::autodiff
