#pragma once
// Memory planning for one graph snapshot: a schedule, the bytes and lifetime of every value,
// static vs dynamic memory, and arena plans from several named planners compared against the
// lower bound (the most bytes live at any one step of the schedule).
//
// Model of memory (what the numbers mean):
// - Static memory: initializers, Constant nodes' outputs, graph inputs (given by the caller) and
//   graph outputs (handed back to the caller). Counted, never placed in the arena.
// - Dynamic memory: every other value a top-level node produces (activations), plus per-op
//   workspace (Conv im2col: C_in/group * kh * kw * H_out * W_out * 4 bytes, one image at a time;
//   none for a 1x1, stride-1, unpadded Conv, which reads its input directly).
// - A dynamic value lives [producing step, last reading step]; a read inside an If/Loop body by
//   outer-scope capture counts as a read at the If/Loop's step. A value nobody reads lives [p, p].
// - Subgraph internals are not planned at this level (bodies would get their own plan).
// - Values whose size cannot be known (missing shape, symbolic dim, non-tensor type) are listed in
//   unknownSizeValues and left out of every total and plan: never counted as 0 silently.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/Graph.h"
#include "ir/Model.h"

namespace passlens::memory {

/// One dynamic tensor (or workspace) with the facts the planners need. Pure data: the planners
/// work on vectors of these alone (oracle/property tests, UI charts).
struct TensorLifetime {
    ir::ValueId value = ir::kNone;   ///< kNone for workspace
    std::string name;
    int64_t bytes = 0;
    int first = 0, last = 0;         ///< producing step, last reading step (inclusive)
    bool isStatic = false;
    bool isWorkspace = false;
    /// Indices (into the same vector) of tensors this one may overwrite in place: inputs of its
    /// producing elementwise op that die at this step, with the same size and element type.
    std::vector<int> inplaceCandidates;
    /// Steps that read this tensor (for the parallel-aware check); empty = only its producer.
    std::vector<int> readers;
};

struct Schedule {
    std::vector<ir::NodeId> order;
};

struct BufferAssignment {
    ir::ValueId value = ir::kNone;
    std::string name;
    int64_t offset = 0;
    int64_t bytes = 0;
    int first = 0, last = 0;
    std::optional<ir::ValueId> inplaceOf;  ///< the input whose memory this value overwrites
    int inplaceOfIndex = -1;               ///< same, as an index into the lifetime vector
};

/// Which steps can reach which (transitive closure of the schedule's DAG), as bitsets.
struct Reachability {
    std::vector<std::vector<uint64_t>> bits;  ///< bits[a] has bit b when step b depends on step a
    bool reaches(int a, int b) const {
        return a == b || ((bits[a][static_cast<size_t>(b) / 64] >> (b % 64)) & 1u);
    }
};

struct PlanConstraints {
    /// When set, two tensors share memory only when every reader of the earlier one has a path
    /// to the producer of the later one, so sharing never removes parallelism.
    const Reachability* parallelAware = nullptr;
};

struct MemoryPlan {
    std::string planner;
    int64_t arenaBytes = 0;
    int64_t lowerBoundBytes = 0;
    int64_t naiveBytes = 0;
    int64_t staticBytes = 0;
    int64_t dynamicBytes = 0;     ///< activations + workspace of known size (= naiveBytes)
    int64_t workspaceBytes = 0;
    int64_t parameterBytes = 0, constantBytes = 0, inputBytes = 0, outputBytes = 0;
    std::vector<BufferAssignment> buffers;
    std::vector<int64_t> liveBytesPerStep;
    std::vector<std::string> unknownSizeValues;
    std::vector<std::string> scheduleNames;  ///< node display names in schedule order
    std::vector<TensorLifetime> lifetimes;   ///< the planned set (indices match inplaceOfIndex)
    bool parallelAware = false;
};

/// The planner names, in report order.
const std::vector<std::string>& plannerNames();  // naive inplace share greedy-size greedy-breadth best

/// Most bytes live at any step; an in-place pair the rules allow counts once at its hand-off step
/// (so the bound holds for every planner, in-place ones included).
int64_t lowerBound(const std::vector<TensorLifetime>& tensors, std::vector<int64_t>* perStep = nullptr);
int64_t naiveTotal(const std::vector<TensorLifetime>& tensors);

/// Plans a lifetime set with one named planner. Throws passlens::Error(BadInput) on an unknown
/// name. The result is validated before it is returned (throws CheckFailed if a planner is wrong).
MemoryPlan planLifetimes(const std::vector<TensorLifetime>& tensors, const std::string& planner,
                         const PlanConstraints& constraints = {});

/// Checks a plan against its lifetime set: no two buffers live at the same step overlap in the
/// arena unless one overwrites the other in place where the rule allows (hand-off step only,
/// same offset and size, listed candidate), every buffer inside the arena, and (parallel-aware)
/// no sharing between tensors not ordered by a path. Returns the first problem, or nullopt.
std::optional<std::string> validatePlan(const std::vector<TensorLifetime>& tensors,
                                        const std::vector<BufferAssignment>& buffers, int64_t arenaBytes,
                                        const PlanConstraints& constraints = {});

// ---- from a graph ------------------------------------------------------------------------------

enum class ScheduleKind { Model, MemoryAware };

struct PlanOptions {
    std::string planner = "best";
    ScheduleKind schedule = ScheduleKind::Model;
    bool parallelAware = false;
};

/// Model order, or a greedy memory-aware topological order (pick the ready node that adds the
/// fewest live bytes; ties go to model order).
Schedule makeSchedule(const ir::Graph& g, ScheduleKind kind);

/// Sizes, classification and lifetimes for a graph under a schedule; fills everything in the plan
/// except the arena and buffers.
MemoryPlan analyzeMemory(const ir::Model& m, const ir::Graph& g, const Schedule& s);

/// Step reachability for the parallel-aware option: steps² bits, so it refuses (BadInput) a schedule
/// whose matrix would exceed kMaxReachabilityBytes (about 46k steps).
inline constexpr size_t kMaxReachabilityBytes = size_t(256) << 20;
Reachability computeReachability(const ir::Graph& g, const Schedule& s);

/// The whole thing: schedule, lifetimes, the named planner's arena plan (validated).
MemoryPlan planMemory(const ir::Model& m, const ir::Graph& g, const PlanOptions& options);

/// Bytes of a tensor type, or nullopt when unknown (no shape, symbolic dim, no fixed element size).
std::optional<int64_t> tensorBytes(const ir::TypeInfo& t);

}  // namespace passlens::memory

namespace passlens::memory {

/// A plan for one If/Loop/Scan body, planned as a graph of its own (its captures and formal
/// inputs/outputs are static from the body's view). `path` names the owner: "If_0/then_branch".
struct SubgraphPlan {
    std::string path;
    MemoryPlan plan;
};

/// Plans every subgraph body, nested ones included, depth first.
std::vector<SubgraphPlan> planSubgraphs(const ir::Model& m, const ir::Graph& g, const PlanOptions& options);

}  // namespace passlens::memory
