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

void registerFusionPasses(PassRegistry& registry);

}  // namespace passlens::passes
