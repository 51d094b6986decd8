#pragma once
// Every pass of core/passes, by the function in its own file that registers it (name and
// description from the pass class, level and place in the pipeline beside it). The catalog
// (core/pipeline/PassCatalog.cpp) calls each; a new pass adds one line here and one call there.
#include "passes/PassRegistry.h"

namespace passlens::passes {

void registerConstantFoldingPass(PassRegistry& reg);    // ConstantFolding.cpp
void registerShapeChainFoldingPass(PassRegistry& reg);  // ShapeChainFolding.cpp
void registerAlgebraicPass(PassRegistry& reg);          // Algebraic.cpp
void registerCsePass(PassRegistry& reg);                // Cse.cpp
void registerDcePass(PassRegistry& reg);                // Dce.cpp
void registerFuseConvBatchNormPass(PassRegistry& reg);  // fusion/FuseConvBatchNorm.cpp
void registerFuseHardSwishPass(PassRegistry& reg);      // fusion/FuseHardSwish.cpp
void registerFuseConvScaleShiftPass(PassRegistry& reg); // fusion/FuseConvScaleShift.cpp
void registerFuseLayerNormPass(PassRegistry& reg);      // fusion/FuseLayerNorm.cpp
void registerFuseReshapePass(PassRegistry& reg);        // fusion/FuseReshape.cpp
void registerFuseMatMulAddPass(PassRegistry& reg);      // fusion/FuseMatMulAdd.cpp
void registerFusePReluPass(PassRegistry& reg);          // fusion/FusePRelu.cpp
void registerFuseGlobalPoolPass(PassRegistry& reg);     // fusion/FuseGlobalPool.cpp
void registerFuseGeluPass(PassRegistry& reg);           // fusion/FuseGelu.cpp
void registerFuseSiluPass(PassRegistry& reg);           // fusion/FuseSilu.cpp
void registerFoldConstantChainsPass(PassRegistry& reg); // fusion/FoldConstantChains.cpp
void registerGroupGeluPass(PassRegistry& reg);          // fusion/GroupActivations.cpp
void registerGroupSiluPass(PassRegistry& reg);          // fusion/GroupActivations.cpp
void registerGroupAttentionPass(PassRegistry& reg);     // fusion/GroupAttention.cpp
void registerDetectAttentionPass(PassRegistry& reg);    // fusion/DetectAttention.cpp
void registerGroupFunctionsPass(PassRegistry& reg);     // fusion/GroupFunctions.cpp
void registerLayoutPass(PassRegistry& reg);             // layout/LayoutPass.cpp
void registerTransposePass(PassRegistry& reg);          // layout/TransposeOptimizer.cpp
void registerVersionConvertPass(PassRegistry& reg);     // VersionConvertPass.cpp
namespace ort { void registerOnnxRuntimePasses(PassRegistry& reg); }  // onnxruntime/OrtProfile.cpp

/// All of the above, in this order (the order `passlens-cli passes` and error messages list them in).
inline void registerAllPasses(PassRegistry& reg) {
    for (auto* f : {registerConstantFoldingPass, registerShapeChainFoldingPass, registerAlgebraicPass,
                    registerCsePass, registerDcePass, registerFuseConvBatchNormPass, registerFuseHardSwishPass, registerFuseConvScaleShiftPass, registerFuseLayerNormPass,
                    registerFuseReshapePass, registerFuseMatMulAddPass, registerFusePReluPass,
                    registerFuseGlobalPoolPass, registerFuseGeluPass, registerFuseSiluPass,
                    registerFoldConstantChainsPass, registerGroupGeluPass, registerGroupSiluPass,
                    registerGroupAttentionPass, registerDetectAttentionPass, registerGroupFunctionsPass,
                    registerLayoutPass, registerTransposePass, registerVersionConvertPass})
        f(reg);
    ort::registerOnnxRuntimePasses(reg);
}

}  // namespace passlens::passes
