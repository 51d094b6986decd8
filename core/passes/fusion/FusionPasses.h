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
protected:
    void runImpl(PassContext& ctx) const override;
};

/// ReduceMean, Sub, Pow, ReduceMean, Add ε, Sqrt, Div, Mul γ, Add β → LayerNormalization (opset ≥ 17).
class FuseLayerNorm : public Pass {
public:
    std::string name() const override { return "fuse-layer-norm"; }
    std::string description() const override { return "Fuses a decomposed layer normalization into LayerNormalization (opset 17)"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// clip(x+3,0,6)/6 → HardSigmoid; x·clip(x+3,0,6)/6 and x·HardSigmoid(x) → HardSwish (opset ≥ 14).
class FuseHardSwish : public Pass {
public:
    std::string name() const override { return "fuse-hard-swish"; }
    std::string description() const override { return "Fuses decomposed HardSigmoid and HardSwish (opset 14) forms"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Add(MatMul(A, B), C) → Gemm for 2-D A, B and a constant C; 2-D Transposes of A/B → transA/transB.
class FuseMatMulAdd : public Pass {
public:
    std::string name() const override { return "fuse-matmul-add"; }
    std::string description() const override { return "Fuses a 2-D MatMul and the Add of a constant bias into Gemm (Transposes as transA/transB)"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

/// Conv → Mul/Add by a per-channel constant folded into the Conv's weights and bias.
class FuseConvScaleShift : public Pass {
public:
    std::string name() const override { return "fuse-conv-mul-add"; }
    std::string description() const override { return "Folds a per-channel constant Mul or Add after a Conv into its weights and bias"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

void registerFusionPasses(PassRegistry& registry);

}  // namespace passlens::passes
