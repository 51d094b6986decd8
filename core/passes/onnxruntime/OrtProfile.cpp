// The `onnxruntime` profile: which ort-* pass stands for which ONNX Runtime transformer, and the
// order of graph_transformer_utils.cc (GenerateTransformers, Level1 then Level2, CPU provider).
#include "passes/fusion/PatternUtil.h"
#include "passes/onnxruntime/OrtPasses.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

void OrtPass::runImpl(PassContext& ctx) const {
    const int64_t opset = pattern::defaultOpset(ctx.model());
    ctx.forEachGraph([&](Rewriter& rw) { run_(rw, opset); });
}

namespace {

struct Entry {
    const char* pass;
    Level level;  ///< Basic: ONNX Runtime Level1 and the partitioner (at every level); Extended: Level2
};

// ONNX Runtime 1.30, CPU execution provider. Standard passes stand in where they do the same work:
// cse (CommonSubexpressionElimination), constant-folding and shape-chain-folding (ConstantFolding,
// which also folds Shape of a static shape), fuse-conv-bn and fuse-conv-mul-add (ConvBNFusion,
// ConvMulFusion, ConvAddFusion), fuse-layer-norm (LayerNormFusion into LayerNormalization).
const std::vector<Entry>& entries() {
    static const std::vector<Entry> list{
        {"ort-level1-rules", Level::Basic},
        {"fuse-conv-bn", Level::Basic},
        {"fuse-conv-mul-add", Level::Basic},
        {"cse", Level::Basic},
        {"constant-folding", Level::Basic},
        {"shape-chain-folding", Level::Basic},
        {"ort-matmul-add", Level::Basic},
        {"ort-reshape-fusion", Level::Basic},
        {"ort-gelu-basic", Level::Basic},
        {"fuse-layer-norm", Level::Basic},
        {"dce", Level::Basic},
        {"ort-inline-functions", Level::Basic},
        {"ort-gemm-activation", Level::Extended},
        {"ort-conv-activation", Level::Extended},
        {"ort-gelu", Level::Extended},
        {"ort-simplified-layer-norm", Level::Extended},
        {"ort-attention", Level::Extended},
        {"ort-gather-slice-to-split", Level::Extended},
        {"ort-gather-to-slice", Level::Extended},
        {"ort-matmul-transpose", Level::Extended},
        {"ort-bias-gelu", Level::Extended},
        {"ort-skip-layer-norm", Level::Extended},
        {"ort-quick-gelu", Level::Extended},
        {"ort-matmul-scale", Level::Extended},
    };
    return list;
}

OrtPass::Run rulesRun(std::function<std::vector<RewriteRule>(int64_t)> rules) {
    return [rules = std::move(rules)](Rewriter& rw, int64_t opset) { applyRewriteRules(rw, rules(opset)); };
}

}  // namespace

void registerOnnxRuntimePasses(PassRegistry& reg) {
    auto add = [&](const char* name, const char* description, OrtPass::Run run) {
        const std::string n = name, d = description;
        reg.add(n, d, Level::None, PassRole::Profile, [n, d, run] { return std::make_unique<OrtPass>(n, d, run); });
    };
    add("ort-level1-rules", "ONNX Runtime Level1 rules: EliminateIdentity, EliminateDropout, CastElimination, ExpandElimination, EliminateSlice, NoopElimination, DivMulFusion",
        rulesRun([](int64_t) { return level1Rules(); }));
    add("ort-matmul-add", "ONNX Runtime MatMulAddFusion: MatMul + Add → Gemm, Reshapes around it for an N-D static input",
        rulesRun([](int64_t) { return matMulAddFusion(); }));
    add("ort-reshape-fusion", "ONNX Runtime ReshapeFusion: contiguous Reshapes with a known result shape → one Reshape",
        rulesRun([](int64_t) { return reshapeFusion(); }));
    add("ort-gelu-basic", "ONNX Runtime GeluFusion (Level1): the Erf form of GELU → ONNX Gelu, opset 20 and later",
        rulesRun([](int64_t opset) { return geluFusion(true, opset); }));
    add("ort-inline-functions", "ONNX Runtime partitioning: function ops without a CPU kernel inlined (HardSwish → HardSigmoid, Mul)",
        rulesRun([](int64_t) { return inlineFunctionsWithoutKernel(); }));
    add("ort-gemm-activation", "ONNX Runtime GemmActivationFusion: Gemm + activation → com.microsoft FusedGemm",
        rulesRun([](int64_t) { return gemmActivationFusion(); }));
    add("ort-conv-activation", "ONNX Runtime ConvActivationFusion: Conv + Relu/Sigmoid/Tanh/LeakyRelu/Clip/HardSigmoid → com.microsoft FusedConv",
        rulesRun([](int64_t) { return convActivationFusion(); }));
    add("ort-gelu", "ONNX Runtime GeluFusion (Level2): the Erf form of GELU → com.microsoft Gelu",
        rulesRun([](int64_t opset) { return geluFusion(false, opset); }));
    add("ort-simplified-layer-norm", "ONNX Runtime SimplifiedLayerNormFusion: RMSNorm → SimplifiedLayerNormalization",
        rulesRun([](int64_t) { return simplifiedLayerNormFusion(); }));
    add("ort-attention", "ONNX Runtime AttentionFusion: explains, per attention block, which anchor condition fails (rewrites nothing)",
        rulesRun([](int64_t) { return attentionFusion(); }));
    add("ort-gather-slice-to-split", "ONNX Runtime GatherSliceToSplitFusion: Gathers/Slices covering one axis → Split (+ Squeeze)",
        [](Rewriter& rw, int64_t opset) {
            fuseGatherSliceOnSources(rw, opset);
            applyRewriteRules(rw, gatherSliceToSplitFusion(opset));
        });
    add("ort-gather-to-slice", "ONNX Runtime GatherToSliceFusion: Gather by a Range → Slice",
        rulesRun([](int64_t) { return gatherToSliceFusion(); }));
    add("ort-matmul-transpose", "ONNX Runtime MatmulTransposeFusion: Transposes into com.microsoft FusedMatMul's transA/transB/transBatch",
        rulesRun([](int64_t) { return matMulTransposeFusion(); }));
    add("ort-bias-gelu", "ONNX Runtime BiasGeluFusion: Add of a bias + Gelu → com.microsoft BiasGelu",
        rulesRun([](int64_t) { return biasGeluFusion(); }));
    add("ort-skip-layer-norm", "ONNX Runtime SkipLayerNormFusion: Add + LayerNormalization → com.microsoft SkipLayerNormalization",
        rulesRun([](int64_t) { return skipLayerNormFusion(); }));
    add("ort-quick-gelu", "ONNX Runtime QuickGeluFusion: x·sigmoid(αx) → com.microsoft QuickGelu",
        rulesRun([](int64_t) { return quickGeluFusion(); }));
    add("ort-matmul-scale", "ONNX Runtime MatMulScaleFusion: scalar Mul/Div around MatMul → com.microsoft FusedMatMul alpha",
        rulesRun([](int64_t) { return matMulScaleFusion(); }));
}

std::vector<std::string> profilePipeline(Level level) {
    std::vector<std::string> out;
    for (const Entry& e : entries())
        if (level >= e.level) out.push_back(e.pass);
    return out;
}

std::string profileLevelOf(const std::string& pass) {
    for (const Entry& e : entries())
        if (pass == e.pass) return e.level == Level::Basic ? "onnxruntime basic" : "onnxruntime extended";
    return {};
}

}  // namespace passlens::passes::ort
