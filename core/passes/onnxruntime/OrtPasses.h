#pragma once
// The `onnxruntime` target profile: ONNX Runtime 1.30's CPU graph transformers at its basic
// (Level1) and extended (Level2) levels, each a pass of its own (ort-*), in the order
// onnxruntime/core/optimizer/graph_transformer_utils.cc runs them. Every fusion is a set of
// RewriteRules named after the ONNX Runtime transformer ("SkipLayerNormFusion"), rewrites through
// the Rewriter (contrib ops in com.microsoft, with ONNX Runtime's op type, attributes and input
// order) and says at each partial match which of ONNX Runtime's conditions refused it, with the
// node and the edge.
#include <string>
#include <vector>

#include "passes/Pass.h"
#include "passes/PassRegistry.h"
#include "passes/RewriteRules.h"

namespace passlens::passes::ort {

/// A profile pass: its rules applied to every graph (inner graphs first, as ONNX Runtime's Recurse).
class OrtPass final : public Pass {
public:
    using Run = std::function<void(Rewriter&, int64_t opset)>;
    OrtPass(std::string name, std::string description, Run run)
        : name_(std::move(name)), description_(std::move(description)), run_(std::move(run)) {}
    std::string name() const override { return name_; }
    std::string description() const override { return description_; }

protected:
    void runImpl(PassContext& ctx) const override;

private:
    std::string name_, description_;
    Run run_;
};

// The rule sets, one per ONNX Runtime transformer (each file holds one theme).
std::vector<RewriteRule> level1Rules();                               // Level1Rules.cpp
std::vector<RewriteRule> convScaleFusions();                          // ConvScaleFusions.cpp
std::vector<RewriteRule> matMulAddFusion();                           // MatMulAddFusion.cpp
std::vector<RewriteRule> reshapeFusion();                             // ReshapeFusion.cpp
std::vector<RewriteRule> geluFusion(bool level1, int64_t opset);      // GeluFusions.cpp
std::vector<RewriteRule> biasGeluFusion();                            // GeluFusions.cpp
std::vector<RewriteRule> fastGeluFusion();                            // FastGeluFusion.cpp
std::vector<RewriteRule> quickGeluFusion();                           // GeluFusions.cpp
std::vector<RewriteRule> convActivationFusion();                      // ActivationFusions.cpp
std::vector<RewriteRule> gemmActivationFusion();                      // ActivationFusions.cpp
std::vector<RewriteRule> inlineFunctionsWithoutKernel();              // ActivationFusions.cpp
std::vector<RewriteRule> simplifiedLayerNormFusion();                 // NormFusions.cpp
std::vector<RewriteRule> skipLayerNormFusion();                       // NormFusions.cpp
std::vector<RewriteRule> attentionFusion();                           // AttentionFusion.cpp
std::vector<RewriteRule> gatherSliceToSplitFusion(int64_t opset);     // GatherFusions.cpp
std::vector<RewriteRule> gatherToSliceFusion();                       // GatherFusions.cpp
/// GatherSliceToSplitFusion on graph inputs and initializers read by several Gather/Slice nodes.
bool fuseGatherSliceOnSources(Rewriter& rw, int64_t opset);          // GatherFusions.cpp
std::vector<RewriteRule> matMulTransposeFusion();                     // MatMulFusions.cpp
std::vector<RewriteRule> matMulScaleFusion();                         // MatMulFusions.cpp
/// TransposeOptimizer over one graph (level2: the CPU-assigned run, whose handlers add Resize).
void transposeOptimizer(Rewriter& rw, int64_t opset, bool level2);  // TransposeOptimizer.cpp

/// Registers every ort-* pass (level None: they run from the profile or --passes, never in the
/// standard pipelines).
void registerOnnxRuntimePasses(PassRegistry& reg);

/// The pass names of the profile at `level` (Basic: Level1 and the partitioner's function
/// inlining, which ONNX Runtime does at every level; Extended: those and Level2), in ONNX Runtime's order. Standard passes appear where they do what
/// the ONNX Runtime transformer does (cse, constant-folding, shape-chain-folding, fuse-conv-bn, ...).
std::vector<std::string> profilePipeline(Level level);
/// "ONNX Runtime basic" / "ONNX Runtime extended (Level2)": the lowest profile level running `pass`,
/// empty when the profile does not run it.
std::string profileLevelOf(const std::string& pass);

}  // namespace passlens::passes::ort
