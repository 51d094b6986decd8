#pragma once
// Pattern fusions into standard ONNX ops (level `extended`).
#include "passes/Pass.h"
#include "passes/PassRegistry.h"

namespace passlens::passes {

/// Conv → BatchNormalization (inference) folded into the Conv's weights and bias:
/// w' = w·γ/σ, b' = (b−μ)·γ/σ + β with σ = sqrt(var + ε).
class FuseConvBatchNorm : public Pass {
public:
    std::string name() const override { return "fuse-conv-bn"; }
    std::string description() const override { return "Folds an inference BatchNormalization into the Conv before it"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// ReduceMean, Sub, Pow, ReduceMean, Add ε, Sqrt, Div, Mul γ, Add β → LayerNormalization (opset ≥ 17).
class FuseLayerNorm : public Pass {
public:
    std::string name() const override { return "fuse-layer-norm"; }
    std::string description() const override { return "Fuses a decomposed layer normalization into LayerNormalization (opset 17)"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// The fuse-layer-norm rewrite on one graph, refusing below `minOpset` (17 for ONNX's
/// LayerNormalization; 1 where the target runtime has its own schema, as ONNX Runtime does).
void fuseLayerNorms(Rewriter& rw, int64_t opset, int64_t minOpset);

/// clip(x+3,0,6)/6 → HardSigmoid; x·clip(x+3,0,6)/6 and x·HardSigmoid(x) → HardSwish (opset ≥ 14).
class FuseHardSwish : public Pass {
public:
    std::string name() const override { return "fuse-hard-swish"; }
    std::string description() const override { return "Fuses decomposed HardSigmoid and HardSwish (opset 14) forms"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Add(MatMul(A, B), C) → Gemm for 2-D A, B and a constant C; 2-D Transposes of A/B → transA/transB.
class FuseMatMulAdd : public Pass {
public:
    std::string name() const override { return "fuse-matmul-add"; }
    std::string description() const override { return "Fuses a 2-D MatMul and the Add of a constant bias into Gemm (Transposes as transA/transB)"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Conv → Mul/Add by a per-channel constant folded into the Conv's weights and bias.
class FuseConvScaleShift : public Pass {
public:
    std::string name() const override { return "fuse-conv-mul-add"; }
    std::string description() const override { return "Folds a per-channel constant Mul or Add after a Conv into its weights and bias"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// (x∘a)∘b with scalar constants a, b → x∘c (Mul/Div and Add/Sub chains).
class FoldConstantChains : public Pass {
public:
    std::string name() const override { return "fold-constant-chains"; }
    std::string description() const override { return "Folds two elementwise steps by scalar constants into one ((x·a)·b → x·ab, (x+a)−b → x+(a−b))"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Relu(x) − α·Relu(−x) (and + β·Relu(−x)) → PRelu.
class FusePRelu : public Pass {
public:
    std::string name() const override { return "fuse-prelu"; }
    std::string description() const override { return "Fuses Relu(x) − α·Relu(−x) forms into PRelu"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// ReduceMean over all spatial axes (one node or two chained) → GlobalAveragePool.
class FuseGlobalPool : public Pass {
public:
    std::string name() const override { return "fuse-global-pool"; }
    std::string description() const override { return "Fuses ReduceMean over every spatial axis (one or two nodes) into GlobalAveragePool"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// GELU erf/tanh forms: found and reported (Gelu needs opset 20).
class FuseGelu : public Pass {
public:
    std::string name() const override { return "fuse-gelu"; }
    std::string description() const override { return "Fuses GELU (erf and tanh forms) into Gelu at opset 20+; below that each is reported and kept"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// x·Sigmoid(k·x): found and reported (no standard op).
class FuseSilu : public Pass {
public:
    std::string name() const override { return "fuse-silu"; }
    std::string description() const override { return "Finds x·Sigmoid(k·x) (SiLU, QuickGELU); reported and kept (no standard op)"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// One matched activation form (GELU, SiLU, QuickGELU): all its nodes, in graph order, computing
/// `out` from `x` with scalar constants only.
struct ActivationForm {
    std::vector<ir::NodeId> nodes;
    ir::ValueId x = ir::kNone, out = ir::kNone;
    ir::NodeId anchor = ir::kNone;  ///< the node named in remarks (Erf, Tanh, the final Mul)
    std::string form;               ///< "GELU (erf form)", "SiLU x·Sigmoid(x)", ...
    std::string function;           ///< model-local function name: Gelu, GeluTanh, Silu, QuickGelu, SiluScaled
};
/// GELU erf and tanh forms of `g` (the matcher of fuse-gelu).
std::vector<ActivationForm> findGeluForms(const ir::Graph& g);
/// x·Sigmoid(k·x) forms of `g` (the matcher of fuse-silu).
std::vector<ActivationForm> findSiluForms(const ir::Graph& g);

/// Each GELU form becomes one call of a model-local function (level all: not a standard op).
class GroupGelu : public Pass {
public:
    std::string name() const override { return "group-gelu"; }
    std::string description() const override { return "Turns each GELU (erf and tanh forms) into one call of a model-local function Gelu"; }
    /// A call replaces the matched nodes and writes their result value, whose type stays.
    bool preservesValueTypes() const override { return true; }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Each x·Sigmoid(k·x) form becomes one call of a model-local function (level all).
class GroupSilu : public Pass {
public:
    std::string name() const override { return "group-silu"; }
    std::string description() const override { return "Turns each x·Sigmoid(k·x) (SiLU, QuickGELU) into one call of a model-local function Silu"; }
    /// A call replaces the matched nodes and writes their result value, whose type stays.
    bool preservesValueTypes() const override { return true; }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// One scaled dot-product attention: MatMul(Q, Kᵀ) → [scale] → [mask Add] → Softmax → MatMul(·, V),
/// with the scale on the scores or on Q and K transposed by a Transpose or already transposed.
struct AttentionForm {
    std::vector<ir::NodeId> nodes;  ///< Q·Kᵀ MatMul, mask Add, scale, Transpose / Q scale, Softmax, ·V MatMul
    ir::ValueId q = ir::kNone, k = ir::kNone, v = ir::kNone, mask = ir::kNone, out = ir::kNone;
    ir::NodeId softmax = ir::kNone;
    std::string text;               ///< "attention at sm: Q·Kᵀ qk (Kᵀ by kt), mask add, scale div, sm, ·V pv"
    /// A Softmax between a ·V MatMul and something that is not Q·Kᵀ: the node in the way and why.
    ir::NodeId blocker = ir::kNone;
    std::string why;
    bool matched() const { return why.empty(); }
};
/// Every Softmax whose result a MatMul reads as its left operand, matched back to Q·Kᵀ (or not).
std::vector<AttentionForm> findAttentionForms(const ir::Graph& g);

/// Attention detection: applied remark listing Q·Kᵀ, scale, mask, Softmax and ·V; no rewrite.
class DetectAttention : public Pass {
public:
    std::string name() const override { return "detect-attention"; }
    std::string description() const override { return "Marks scaled dot-product attention (Q·Kᵀ, scale, mask, Softmax, ·V); no rewrite"; }
    bool preservesValueTypes() const override { return true; }  ///< the fused node writes the pattern's result value
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Reshape/Expand targets computed by a shape chain → constant targets (0 = copy, −1, literals).
class FuseReshape : public Pass {
public:
    std::string name() const override { return "fuse-reshape"; }
    std::string description() const override {
        return "Replaces a Reshape or Expand target computed by a Shape/Gather/Unsqueeze/Concat chain with a constant (0 = copy, -1)";
    }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Each scaled dot-product attention becomes one call of a model-local function Attention (level all).
class GroupAttention : public Pass {
public:
    std::string name() const override { return "group-attention"; }
    std::string description() const override {
        return "Turns each scaled dot-product attention (Q·Kᵀ, scale, mask, Softmax, ·V) into one call of a model-local function Attention";
    }
    /// A call replaces the matched nodes and writes their result value, whose type stays.
    bool preservesValueTypes() const override { return true; }
protected:
    void runImpl(PassContext& ctx) const override;
};

}  // namespace passlens::passes
