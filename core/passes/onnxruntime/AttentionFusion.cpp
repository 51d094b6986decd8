// ONNX Runtime's AttentionFusion (attention_fusion.cc), CPU: it anchors on a LayerNormalization of
// since-version 1 (ONNX Runtime's own contrib schema in the ONNX domain) whose output has exactly
// 4 edges, to 3 MatMul (Q, K, V) and 1 Add (the residual), then walks a fixed BERT-style path.
// PyTorch exports meet none of this: opset-17 LayerNormalization has since-version 17, the Q/K/V
// projection is one packed MatMul (turned into Gemm by MatMulAddFusion at Level1), pre-LN blocks
// read the LayerNormalization once. The pass rewrites nothing: it says, for every attention block
// (a Softmax between two MatMuls), which of ONNX Runtime's conditions failed and at which node.
#include <deque>
#include <set>

#include "passes/match/Match.h"
#include "passes/onnxruntime/OrtPasses.h"
#include "passes/onnxruntime/OrtUtil.h"

namespace passlens::passes::ort {

using namespace passlens::ir;

namespace {

/// The nearest LayerNormalization (or SkipLayerNormalization) upstream of `from`, breadth first
/// over every input, at most `depth` nodes back.
NodeId nearestLayerNorm(const Graph& g, NodeId from, int depth) {
    std::deque<std::pair<NodeId, int>> work{{from, 0}};
    std::set<NodeId> seen{from};
    while (!work.empty()) {
        auto [n, d] = work.front();
        work.pop_front();
        const std::string& op = g.node(n).opType;
        if (n != from && (op == "LayerNormalization" || op == "SkipLayerNormalization")) return n;
        if (d >= depth) continue;
        for (ValueId v : g.node(n).inputs) {
            if (v == kNone) continue;
            NodeId p = g.value(v).producer;
            if (p != kNone && seen.insert(p).second) work.push_back({p, d + 1});
        }
    }
    return kNone;
}

/// The first of AttentionFusion's anchor conditions `ln` fails, in ONNX Runtime's order.
std::string anchorProblem(const Graph& g, NodeId ln) {
    const Node& node = g.node(ln);
    const size_t edges = outputEdges(g, ln);
    std::string why;
    if (edges != 4)
        why = "the output of " + q(g, ln) + " is " + readBy(g, ln) + ", ONNX Runtime anchors on a LayerNormalization with exactly 4 (3 MatMul for Q, K, V and 1 Add)";
    if (node.opType == "SkipLayerNormalization") {
        why += std::string(why.empty() ? "" : "; and ") + q(g, ln) + " is a com.microsoft SkipLayerNormalization, the anchor must be a LayerNormalization";
    } else {
        why += std::string(why.empty() ? "" : "; and even then ") + q(g, ln) +
               " is ONNX's LayerNormalization (since opset 17), AttentionFusion matches only since-version 1 (ONNX Runtime's own LayerNormalization schema)";
    }
    if (edges == 4) {
        int matmuls = 0, adds = 0;
        for (NodeId r : outputNodes(g, ln)) {
            matmuls += g.node(r).opType == "MatMul";
            adds += g.node(r).opType == "Add";
        }
        if (matmuls != 3 || adds != 1)
            why += "; its readers are " + std::to_string(matmuls) + " MatMul and " + std::to_string(adds) + " Add, it needs 3 and 1";
    }
    return why;
}

bool explainBlock(Rewriter& rw, NodeId softmax) {
    const Graph& g = rw.graph();
    // An attention block: Softmax read by a MatMul (the value product).
    bool readByMatMul = false;
    for (NodeId r : outputNodes(g, softmax)) readByMatMul |= g.node(r).opType == "MatMul" || g.node(r).opType == "FusedMatMul";
    if (!readByMatMul) return false;
    NodeId ln = nearestLayerNorm(g, softmax, 12);
    std::string why;
    std::vector<NodeId> nodes{softmax};
    std::vector<ValueId> edges;
    if (ln == kNone) {
        why = "no LayerNormalization feeds this block's Q/K/V projections within 12 nodes; ONNX Runtime anchors AttentionFusion on one";
    } else {
        nodes.insert(nodes.begin(), ln);
        edges.push_back(g.node(ln).outputs[0]);
        why = anchorProblem(g, ln);
    }
    refuse(rw, nodes, "AttentionFusion: not applied to the attention block of " + q(g, softmax) + ": " + why, edges);
    return false;
}

}  // namespace

std::vector<RewriteRule> attentionFusion() { return {{"AttentionFusion", {"Softmax"}, "", explainBlock}}; }

}  // namespace passlens::passes::ort
