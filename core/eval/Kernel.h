#pragma once
// Kernel registry of the reference interpreter. Kernels are keyed by (domain, op type) with an
// opset range where their semantics hold; each declares the element types of its main input and
// an optional attribute check, so isSupported() can answer before anything runs.
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "eval/TensorOps.h"
#include "ir/Model.h"

namespace passlens::eval {

struct KernelContext {
    const ir::Model& model;
    const ir::Node& node;
    int64_t opset = 0;
    std::vector<ir::TensorPtr> in;  ///< nullptr for omitted optional inputs
    /// Runs a subgraph of this node with the given inputs (outer-scope reads resolve to the caller).
    std::function<std::vector<ir::TensorPtr>(const ir::Graph&, const std::vector<ir::TensorPtr>&)> runSubgraph;

    bool has(size_t i) const { return i < in.size() && in[i] != nullptr; }
    /// The i-th input; BadInput naming the node when it is missing.
    const ir::Tensor& t(size_t i) const;
    const ir::TensorPtr& ptr(size_t i) const;
    /// The i-th input's elements as bool; BadInput when it is missing or not a bool tensor (a
    /// double read as bool is undefined behaviour, and unvalidated models can wire one in).
    const bool* bools(size_t i) const;
    /// "Conv 'conv1' (ai.onnx opset 11)" for messages.
    std::string where() const;
    [[noreturn]] void fail(const std::string& msg) const;         ///< BadInput
    [[noreturn]] void unsupported(const std::string& msg) const;  ///< Unsupported
};

using KernelFn = std::function<std::vector<ir::TensorPtr>(KernelContext&)>;
/// Returns false (and a reason) for attribute values the kernel does not implement.
using AttrCheck = std::function<bool(const ir::Node&, int64_t opset, std::string* why)>;

struct KernelInfo {
    KernelFn fn;
    std::vector<ir::DataType> types;  ///< allowed element types of input 0; empty = any
    int64_t sinceMin = 1, sinceMax = std::numeric_limits<int64_t>::max();
    bool float16ViaFloat = true;      ///< convert float16 inputs to float32 and float outputs back
    AttrCheck check;
};

class KernelRegistry {
public:
    void add(const std::string& domain, const std::string& op, KernelInfo k);
    const KernelInfo* find(const std::string& domain, const std::string& op, int64_t opset) const;
    bool knowsOp(const std::string& domain, const std::string& op) const;
    /// (domain, op) pairs, sorted, for the README and tests.
    std::vector<std::pair<std::string, std::string>> ops() const;

private:
    std::map<std::pair<std::string, std::string>, std::vector<KernelInfo>> table_;
};

const KernelRegistry& kernelRegistry();

// Type sets.
extern const std::vector<ir::DataType> kFloatTypes;    ///< float, double, float16
extern const std::vector<ir::DataType> kNumericTypes;  ///< every number type
extern const std::vector<ir::DataType> kAllTypes;      ///< numbers and bool
extern const std::vector<ir::DataType> kIntTypes;

// Registration, one function per kernel family (called once when the registry is built).
void registerElementwise(KernelRegistry& r);
void registerShape(KernelRegistry& r);
void registerConv(KernelRegistry& r);
void registerLinalg(KernelRegistry& r);
void registerReduce(KernelRegistry& r);
void registerNorm(KernelRegistry& r);
void registerControlFlow(KernelRegistry& r);
void registerRnn(KernelRegistry& r);
void registerResize(KernelRegistry& r);
void registerIndexing(KernelRegistry& r);
void registerQuant(KernelRegistry& r);
void registerChannelsLast(KernelRegistry& r);  ///< passlens.nhwc (layout pass)
void registerDetection(KernelRegistry& r);     ///< NonMaxSuppression, RoiAlign
void registerNormExtra(KernelRegistry& r);     ///< Group/RMS/Lp/MeanVariance normalization
void registerAttention(KernelRegistry& r);     ///< Attention, RotaryEmbedding (23)
void registerBitwise(KernelRegistry& r);       ///< BitwiseAnd/Or/Xor/Not (18)
void registerSpatial(KernelRegistry& r);       ///< GridSample, AffineGrid, CenterCropPad, Col2Im
void registerEinsum(KernelRegistry& r);

// Attribute helpers.
inline bool hasAttr(const ir::Node& n, std::string_view name) { return n.attr(name) != nullptr; }

}  // namespace passlens::eval
