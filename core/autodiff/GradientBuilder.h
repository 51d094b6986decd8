#pragma once
// Gradient builders: one small function per forward op type (as ONNX Runtime's GradientBuilder
// classes), each emitting standard ONNX nodes through a GradContext. A builder reads the forward
// node's inputs/outputs and the gradients of its outputs, and sets the gradients of the inputs
// the driver asks for. The context records provenance on every node it emits.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes { class Rewriter; }

namespace passlens::autodiff {

/// Shared by all builders of one autodiff run: the rewriter and the set of values the backward
/// graph created (everything else a backward node reads is a forward tensor, i.e. saved).
struct EmitState {
    passes::Rewriter& rw;
    int64_t opset = 0;
    std::set<ir::ValueId> created;
    std::vector<ir::NodeId> emitted;
};

class GradContext {
public:
    GradContext(EmitState& state, ir::NodeId forward, std::vector<ir::ValueId> outputGrads, std::vector<bool> needsGrad);

    // ---- the forward node --------------------------------------------------------------------
    const ir::Node& node() const;
    const ir::Graph& graph() const;
    int64_t opset() const { return state_.opset; }
    size_t inputCount() const;
    /// Forward input / output i (kNone when absent). Reading one in an emitted node saves it.
    ir::ValueId input(size_t i) const;
    ir::ValueId output(size_t i) const;
    /// Gradient flowing into output i; kNone when nothing downstream needs it.
    ir::ValueId gradOut(size_t i) const;
    /// Gradient of output i, or zeros of its shape when none flows in (static shapes).
    ir::ValueId gradOutOrZeros(size_t i);
    bool needsGrad(size_t i) const;
    void setGradIn(size_t i, ir::ValueId grad);
    ir::ValueId gradIn(size_t i) const;

    // ---- emitting ------------------------------------------------------------------------------
    ir::ValueId op(const std::string& type, std::vector<ir::ValueId> inputs, std::vector<ir::Attribute> attrs = {});
    std::vector<ir::ValueId> opMulti(const std::string& type, std::vector<ir::ValueId> inputs, size_t outputs,
                                     std::vector<ir::Attribute> attrs = {});
    /// Scalar of the gradient's element type.
    ir::ValueId scalar(double v);
    ir::ValueId constant(ir::TensorPtr t, const std::string& hint);
    ir::ValueId ints(const std::vector<int64_t>& v, const std::string& hint = "ints");
    /// A constant of the gradient's element type.
    ir::ValueId floats(std::vector<int64_t> dims, const std::vector<double>& v, const std::string& hint);
    /// Zeros of static `dims` (ConstantOfShape) in the gradient's element type.
    ir::ValueId zerosLike(ir::ValueId v);
    /// A 1-D int64 slice [begin, end) of `v`'s shape tensor (end may be INT64_MAX).
    ir::ValueId shapeDims(ir::ValueId v, int64_t begin, int64_t end);
    /// A scalar int64 constant.
    ir::ValueId int64Scalar(int64_t v);
    ir::ValueId zeros(const std::vector<int64_t>& dims);
    /// Element type of the gradients (the forward node's first floating-point input).
    ir::DataType floatType() const;

    // ---- shapes --------------------------------------------------------------------------------
    std::optional<std::vector<int64_t>> staticShape(ir::ValueId v) const;
    /// Static dims or Error(Unsupported) naming this node, the value and `why`.
    std::vector<int64_t> requireStaticShape(ir::ValueId v, const std::string& why) const;
    /// Rank from the type; Error(Unsupported) when unknown.
    int64_t rank(ir::ValueId v) const;
    /// A shape tensor of `v`: a constant when static, else a Shape node on `v`.
    ir::ValueId shapeOf(ir::ValueId v);
    /// Reshapes `x` to the shape of `like`.
    ir::ValueId reshapeLike(ir::ValueId x, ir::ValueId like);
    ir::ValueId reshape(ir::ValueId x, const std::vector<int64_t>& dims);
    /// Sums a broadcast gradient back to `operand`'s shape (identity when shapes agree).
    ir::ValueId sumToShapeOf(ir::ValueId grad, ir::ValueId operand);
    /// Sums a gradient of dims `gradDims` back to `operand`'s shape (leading and broadcast axes).
    ir::ValueId sumTo(ir::ValueId grad, const std::vector<ir::Dim>& gradDims, ir::ValueId operand);
    ir::ValueId unsqueeze(ir::ValueId x, const std::vector<int64_t>& axes);
    /// The tensor of a constant input (initializer or Constant node), null otherwise.
    ir::TensorPtr constantTensor(ir::ValueId v) const;
    /// Integer values of a constant input (initializer or Constant node), nullopt otherwise.
    std::optional<std::vector<int64_t>> constantInts(ir::ValueId v) const;
    ir::ValueId reduceSum(ir::ValueId x, const std::vector<int64_t>& axes, bool keepdims);
    ir::ValueId reduceMean(ir::ValueId x, const std::vector<int64_t>& axes, bool keepdims);

    // ---- saved tensors ---------------------------------------------------------------------------
    /// Of several forward tensors that serve a rule equally, the one that keeps less alive: a
    /// value that stays alive anyway (graph input/output, initializer) first, else the one more
    /// forward nodes read (the next layer saves it anyway); ties → the first. Notes the choice.
    ir::ValueId pickSaved(const std::vector<ir::ValueId>& candidates);
    const std::string& note() const { return note_; }

    [[noreturn]] void unsupported(const std::string& what) const;
    std::string where() const;

private:
    EmitState& state_;
    ir::NodeId forward_;
    std::vector<ir::ValueId> outputGrads_;
    std::vector<bool> needs_;
    std::vector<ir::ValueId> inputGrads_;
    std::string note_;
};

/// A float32 or float64 tensor holding `v` (float32 for every other `dt`).
ir::TensorPtr floatTensorOf(ir::DataType dt, std::vector<int64_t> dims, const std::vector<double>& v);

using GradientBuilder = std::function<void(GradContext&)>;

struct GradientRule {
    GradientBuilder build;
    std::vector<size_t> nonDifferentiable;  ///< input slots never differentiated (shapes, indices, stats)
};

class GradientRegistry {
public:
    void add(const std::string& opType, GradientBuilder b, std::vector<size_t> nonDifferentiable = {});
    const GradientRule* find(const std::string& domain, const std::string& opType) const;
    std::vector<std::string> ops() const;

private:
    std::map<std::string, GradientRule> rules_;
};

const GradientRegistry& gradientRegistry();

// One registration function per op family (rules/*.cpp).
void registerElementwiseGradients(GradientRegistry& r);
void registerLinalgGradients(GradientRegistry& r);
void registerConvGradients(GradientRegistry& r);
void registerNormGradients(GradientRegistry& r);
void registerShapeGradients(GradientRegistry& r);
void registerReduceGradients(GradientRegistry& r);
void registerActivationGradients(GradientRegistry& r);
void registerResizeGradients(GradientRegistry& r);
void registerRoiAlignGradients(GradientRegistry& r);

}  // namespace passlens::autodiff
