// The `onnxruntime` profile: which ort-* pass stands for which ONNX Runtime transformer, and the
// order of graph_transformer_utils.cc (GenerateTransformers, Level1 then Level2, CPU provider).
#include <map>

#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/PatternUtil.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

void OrtPass::runImpl(PassContext& ctx) const {
    const int64_t opset = pattern::defaultOpset(ctx.model());
    OrtShapeScope shapes(ctx.model());
    ctx.forEachGraph([&](Rewriter& rw) { run_(rw, opset); });
}

namespace {

struct Entry {
    const char* pass;
    Level level;  ///< Basic: ONNX Runtime Level1 and the partitioner (at every level); Extended: Level2
};

// ONNX Runtime 1.30, CPU execution provider. Standard passes stand in where they do the same work:
// cse (CommonSubexpressionElimination), constant-folding (ConstantFolding: Shape only of a fully
// static shape, so shape-chain-folding is not here), fuse-conv-bn (ConvBNFusion), fuse-layer-norm
// (LayerNormFusion into ONNX's LayerNormalization). ConvAdd/ConvMulFusion are in ort-level1-rules.
const std::vector<Entry>& entries() {
    static const std::vector<Entry> list{
        {"ort-level1-rules", Level::Basic},
        {"fuse-conv-bn", Level::Basic},
        {"cse", Level::Basic},
        {"constant-folding", Level::Basic},
        {"ort-matmul-add", Level::Basic},
        {"ort-reshape-fusion", Level::Basic},
        {"ort-gelu-basic", Level::Basic},
        {"fuse-layer-norm", Level::Basic},
        {"ort-transpose-optimizer", Level::Basic},
        {"dce", Level::Basic},
        {"ort-level1-repeat", Level::Basic},
        {"ort-inline-functions", Level::Basic},
        {"ort-transpose-optimizer-cpu", Level::Extended},
        {"ort-gemm-activation", Level::Extended},
        {"ort-conv-activation", Level::Extended},
        {"ort-gelu", Level::Extended},
        {"ort-layer-norm", Level::Extended},
        {"ort-simplified-layer-norm", Level::Extended},
        {"ort-attention", Level::Extended},
        {"ort-gather-slice-to-split", Level::Extended},
        {"ort-gather-to-slice", Level::Extended},
        {"ort-matmul-transpose", Level::Extended},
        {"ort-bias-gelu", Level::Extended},
        {"ort-skip-layer-norm", Level::Extended},
        {"ort-fast-gelu", Level::Extended},
        {"ort-quick-gelu", Level::Extended},
        {"ort-matmul-scale", Level::Extended},
        {"ort-level2-repeat", Level::Extended},
    };
    return list;
}

/// The Run of every registered ort-* pass, so ort-level2-repeat can run the Level2 list again.
std::map<std::string, OrtPass::Run>& runsByName() {
    static std::map<std::string, OrtPass::Run> runs;
    return runs;
}

/// What a step of the transformer loop can change: nodes (new ones get new ids), their edges and
/// attribute lists.
size_t fingerprint(const Graph& g) {
    size_t h = g.nodeCount();
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (NodeId n : g.nodeOrder()) {
        const Node& node = g.node(n);
        mix(n);
        for (ValueId v : node.inputs) mix(v);
        for (ValueId v : node.outputs) mix(v);
        mix(node.attributes.size());
    }
    return h;
}

/// GraphTransformerManager::ApplyTransformers runs a level's list up to 10 steps, again while a
/// step changed the graph: the profile's passes of the level are the first step, this is the
/// others, with the level's ort-* rule sets (the standard passes standing in for ConstantFolding,
/// CSE and the Conv fusions are not repeated). A rewrite that needs an earlier one's output fires
/// here: at Level1 NoopElimination of an Add whose 0 ConstantFolding computed, at Level2
/// MatmulTransposeFusion of a Transpose that MatMulScaleFusion's removed Mul kept from its MatMul.
void repeatLevel(Rewriter& rw, int64_t opset, Level level) {
    constexpr int kMaxSteps = 10;
    std::vector<OrtPass::Run> runs;
    for (const Entry& e : entries()) {
        const std::string name = e.pass;
        auto it = runsByName().find(name);
        // TransposeOptimizer applies once (ShouldOnlyApplyOnce); partitioning is no transformer.
        if (e.level != level || it == runsByName().end() || name.find("-repeat") != std::string::npos ||
            name.find("transpose-optimizer") != std::string::npos || name == "ort-inline-functions")
            continue;
        runs.push_back(it->second);
    }
    const QuietRefusals quiet;
    for (int step = 1; step < kMaxSteps; ++step) {
        const size_t before = fingerprint(rw.graph());
        for (const auto& run : runs) {
            OrtShapeScope shapes(rw.model());  // ONNX Runtime resolves the graph between transformers
            run(rw, opset);
        }
        if (fingerprint(rw.graph()) == before) break;
    }
}

OrtPass::Run rulesRun(std::function<std::vector<RewriteRule>(int64_t)> rules) {
    return [rules = std::move(rules)](Rewriter& rw, int64_t opset) { applyRewriteRules(rw, rules(opset)); };
}

}  // namespace

void registerOnnxRuntimePasses(PassRegistry& reg) {
    auto add = [&](const char* name, const char* description, OrtPass::Run run) {
        const std::string n = name, d = description;
        runsByName()[n] = run;
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
    add("ort-transpose-optimizer", "ONNX Runtime TransposeOptimizer (Level1): pushes Transposes through the ops after them where that cancels or merges them",
        [](Rewriter& rw, int64_t opset) { transposeOptimizer(rw, opset, false); });
    add("ort-transpose-optimizer-cpu", "ONNX Runtime TransposeOptimizer (Level2, nodes on the CPU provider): the Level1 pushes again after partitioning",
        [](Rewriter& rw, int64_t opset) { transposeOptimizer(rw, opset, true); });
    add("ort-gemm-activation", "ONNX Runtime GemmActivationFusion: Gemm + activation → com.microsoft FusedGemm",
        rulesRun([](int64_t) { return gemmActivationFusion(); }));
    add("ort-conv-activation", "ONNX Runtime ConvActivationFusion: Conv + Relu/Sigmoid/Tanh/LeakyRelu/Clip/HardSigmoid → com.microsoft FusedConv",
        rulesRun([](int64_t) { return convActivationFusion(); }));
    add("ort-gelu", "ONNX Runtime GeluFusion (Level2): the Erf form of GELU → com.microsoft Gelu",
        rulesRun([](int64_t opset) { return geluFusion(false, opset); }));
    add("ort-layer-norm", "ONNX Runtime LayerNormFusion (Level2): the decomposed layer norm → LayerNormalization at any opset (ONNX Runtime's own schema, since-version 1)",
        [](Rewriter& rw, int64_t opset) {
            rw.setRule("LayerNormFusion");
            fuseLayerNorms(rw, opset, 1);
        });
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
    add("ort-fast-gelu", "ONNX Runtime FastGeluFusion: the tanh approximation of GELU (GPT-2's) → com.microsoft FastGelu",
        rulesRun([](int64_t) { return fastGeluFusion(); }));
    add("ort-quick-gelu", "ONNX Runtime QuickGeluFusion: x·sigmoid(αx) → com.microsoft QuickGelu",
        rulesRun([](int64_t) { return quickGeluFusion(); }));
    add("ort-matmul-scale", "ONNX Runtime MatMulScaleFusion: scalar Mul/Div around MatMul → com.microsoft FusedMatMul alpha",
        rulesRun([](int64_t) { return matMulScaleFusion(); }));
    add("ort-level2-repeat", "ONNX Runtime's transformer loop: the Level2 transformers again while a step changes the graph (up to 10 steps), refusals reported once",
        [](Rewriter& rw, int64_t opset) { repeatLevel(rw, opset, Level::Extended); });
    add("ort-level1-repeat", "ONNX Runtime's transformer loop: the Level1 rewrite rules and fusions again while a step changes the graph (up to 10 steps), refusals reported once",
        [](Rewriter& rw, int64_t opset) { repeatLevel(rw, opset, Level::Basic); });
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
