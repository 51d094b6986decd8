#pragma once
// Reference interpreter: runs a model (or one node of it) on the CPU. Correct first, reasonably
// fast second (BLAS for MatMul/Gemm/Conv). Unsupported ops, attributes or dtypes throw
// Error(ErrorKind::Unsupported) naming the op, domain and opset — never a wrong result.
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "ir/Model.h"

namespace passlens::eval {

struct RunOptions {
    std::vector<std::pair<std::string, int64_t>> dims;   ///< --dim pins for symbolic input dims
    const std::atomic<bool>* cancel = nullptr;            ///< checked between nodes; throws Error(Cancelled)
    std::function<void(size_t done, size_t total)> progress;  ///< optional, main graph nodes only
    /// Largest tensor the run may create, in bytes (--max-memory); 0 = half the physical memory.
    int64_t maxMemoryBytes = 0;
};

/// Runs the main graph. `inputs` follow the order of the graph's non-initializer inputs.
std::vector<ir::TensorPtr> run(const ir::Model& m, const std::vector<ir::TensorPtr>& inputs, const RunOptions& o = {});

/// Evaluates one node of graph g (a graph of m, possibly a subgraph) on given input tensors
/// (nullptr for omitted optional inputs). Used by constant folding. Throws Error(Unsupported).
/// Subgraph captures of outer-scope values are resolved from g's initializers only.
std::vector<ir::TensorPtr> evalNode(const ir::Model& m, const ir::Graph& g, ir::NodeId n,
                                    const std::vector<ir::TensorPtr>& inputs);
/// As above; the node's subgraphs may also read the values of g in `captures` (by name), for
/// callers that run a graph node by node and keep the values themselves.
std::vector<ir::TensorPtr> evalNode(const ir::Model& m, const ir::Graph& g, ir::NodeId n,
                                    const std::vector<ir::TensorPtr>& inputs,
                                    const std::unordered_map<ir::ValueId, ir::TensorPtr>& captures);

/// Cheap capability check without running: false + reason when op/domain/opset/attribute is
/// unsupported. Element types are not known from a bare node; use the graph overload for those.
bool isSupported(const ir::Model& m, const ir::Node& n, std::string* whyNot = nullptr);
/// As above, and also checks the (known) element types of the node's inputs in `g`, and
/// recursively every node of its subgraphs.
bool isSupported(const ir::Model& m, const ir::Graph& g, const ir::Node& n, std::string* whyNot = nullptr);
/// Every node of the main graph (and its subgraphs) supported? First reason otherwise.
bool isModelSupported(const ir::Model& m, std::string* whyNot = nullptr);

/// The non-initializer inputs of the main graph, in order.
std::vector<ir::ValueId> runtimeInputs(const ir::Graph& g);

/// Seeded random inputs for every non-initializer graph input (floats uniform in [-1,1), ints
/// small, bool random; symbolic dims from `dims`, else 1). Deterministic for a given seed.
std::vector<ir::TensorPtr> randomInputs(const ir::Model& m, uint64_t seed,
                                        const std::vector<std::pair<std::string, int64_t>>& dims = {});
/// Names of symbolic input dims that `dims` does not pin (randomInputs sets them to 1).
std::vector<std::string> unpinnedDims(const ir::Model& m, const std::vector<std::pair<std::string, int64_t>>& dims);

struct OutputDiff {
    std::string name;
    double maxAbs = 0, maxRel = 0;
    bool shapeMismatch = false;
    bool ok = true;
};
/// Per output: worst |a-b| and |a-b|/|b|; ok when every element has |a-b| <= atol + rtol*|b|
/// (NaN matches NaN, equal infinities match). `b` is the reference.
std::vector<OutputDiff> compareOutputs(const ir::Model& ref, const std::vector<ir::TensorPtr>& a,
                                       const std::vector<ir::TensorPtr>& b, double rtol, double atol);

}  // namespace passlens::eval
