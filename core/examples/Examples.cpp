#include "examples/Examples.h"

#include "examples/TrainingExamples.h"
#include "examples/Builder.h"

#include <cmath>

namespace passlens::examples {

using namespace passlens::ir;

namespace {

Model convBnRelu() {
    GraphBuilder b("conv_bn_relu");
    ValueId x = b.input("image", DataType::Float, {1, 3, 16, 16});
    ValueId w = b.constant("conv.weight", randomFloats({8, 3, 3, 3}, 1, -0.5f, 0.5f));
    ValueId bias = b.constant("conv.bias", randomFloats({8}, 2));
    ValueId conv = b.op("Conv", {x, w, bias}, {Attribute::makeInts("pads", {1, 1, 1, 1}), Attribute::makeInts("kernel_shape", {3, 3})}, "conv");
    ValueId scale = b.constant("bn.scale", randomFloats({8}, 3, 0.5f, 1.5f));
    ValueId shift = b.constant("bn.bias", randomFloats({8}, 4));
    ValueId mean = b.constant("bn.mean", randomFloats({8}, 5));
    ValueId var = b.constant("bn.var", randomFloats({8}, 6, 0.5f, 2.f));
    ValueId bn = b.op("BatchNormalization", {conv, scale, shift, mean, var}, {Attribute::makeFloat("epsilon", 1e-5f)}, "bn");
    ValueId relu = b.op("Relu", {bn}, {}, "relu");
    b.output(relu);
    return b.finish();
}

/// y = LayerNorm(x) decomposed the way exporters write it, over the last axis.
ValueId decomposedLayerNorm(GraphBuilder& b, ValueId x, int64_t width, const std::string& p, uint64_t seed) {
    ValueId mean = b.op("ReduceMean", {x}, {Attribute::makeInts("axes", {-1}), Attribute::makeInt("keepdims", 1)}, p + ".mean");
    ValueId centered = b.op("Sub", {x, mean}, {}, p + ".sub");
    ValueId sq = b.op("Pow", {centered, b.scalar(p + ".two", 2.f)}, {}, p + ".pow");
    ValueId var = b.op("ReduceMean", {sq}, {Attribute::makeInts("axes", {-1}), Attribute::makeInt("keepdims", 1)}, p + ".var");
    ValueId varEps = b.op("Add", {var, b.scalar(p + ".eps", 1e-5f)}, {}, p + ".add_eps");
    ValueId stdv = b.op("Sqrt", {varEps}, {}, p + ".sqrt");
    ValueId norm = b.op("Div", {centered, stdv}, {}, p + ".div");
    ValueId scaled = b.op("Mul", {norm, b.constant(p + ".gamma", randomFloats({width}, seed, 0.8f, 1.2f))}, {}, p + ".mul_gamma");
    return b.op("Add", {scaled, b.constant(p + ".beta", randomFloats({width}, seed + 1, -0.1f, 0.1f))}, {}, p + ".add_beta");
}

/// GELU in erf form: x · 0.5 · (1 + erf(x / √2)).
ValueId erfGelu(GraphBuilder& b, ValueId x, const std::string& p) {
    ValueId scaled = b.op("Div", {x, b.scalar(p + ".sqrt2", 1.41421356f)}, {}, p + ".div");
    ValueId e = b.op("Erf", {scaled}, {}, p + ".erf");
    ValueId onePlus = b.op("Add", {e, b.scalar(p + ".one", 1.f)}, {}, p + ".add_one");
    ValueId xTimes = b.op("Mul", {x, onePlus}, {}, p + ".mul_x");
    return b.op("Mul", {xTimes, b.scalar(p + ".half", 0.5f)}, {}, p + ".mul_half");
}

Model transformerBlock() {
    const int64_t seq = 8, d = 16, heads = 2, dh = d / heads, ff = 32;
    GraphBuilder b("transformer_block");
    ValueId x = b.input("tokens", DataType::Float, {1, seq, d});
    ValueId ln1 = decomposedLayerNorm(b, x, d, "ln1", 10);
    auto proj = [&](const std::string& n, uint64_t seed) {
        ValueId mm = b.op("MatMul", {ln1, b.constant(n + ".weight", randomFloats({d, d}, seed, -0.3f, 0.3f))}, {}, n);
        ValueId r = b.op("Reshape", {mm, b.ints(n + ".shape", {1, seq, heads, dh})}, {}, n + ".split_heads");
        return b.op("Transpose", {r}, {Attribute::makeInts("perm", {0, 2, 1, 3})}, n + ".to_heads");
    };
    ValueId q = proj("attn.q", 20), k = proj("attn.k", 21), v = proj("attn.v", 22);
    ValueId kt = b.op("Transpose", {k}, {Attribute::makeInts("perm", {0, 1, 3, 2})}, "attn.k_t");
    ValueId scores = b.op("MatMul", {q, kt}, {}, "attn.scores");
    ValueId scaled = b.op("Div", {scores, b.scalar("attn.sqrt_dk", std::sqrt(float(dh)))}, {}, "attn.scale");
    ValueId probs = b.op("Softmax", {scaled}, {Attribute::makeInt("axis", -1)}, "attn.softmax");
    ValueId ctx = b.op("MatMul", {probs, v}, {}, "attn.context");
    ValueId merged = b.op("Transpose", {ctx}, {Attribute::makeInts("perm", {0, 2, 1, 3})}, "attn.from_heads");
    ValueId flat = b.op("Reshape", {merged, b.ints("attn.merge_shape", {1, seq, d})}, {}, "attn.merge_heads");
    ValueId out = b.op("MatMul", {flat, b.constant("attn.out.weight", randomFloats({d, d}, 23, -0.3f, 0.3f))}, {}, "attn.out");
    ValueId res1 = b.op("Add", {x, out}, {}, "residual1");
    ValueId ln2 = decomposedLayerNorm(b, res1, d, "ln2", 30);
    ValueId up = b.op("MatMul", {ln2, b.constant("ffn.up.weight", randomFloats({d, ff}, 40, -0.3f, 0.3f))}, {}, "ffn.up");
    ValueId upB = b.op("Add", {up, b.constant("ffn.up.bias", randomFloats({ff}, 41, -0.1f, 0.1f))}, {}, "ffn.up_bias");
    ValueId act = erfGelu(b, upB, "gelu");
    ValueId down = b.op("MatMul", {act, b.constant("ffn.down.weight", randomFloats({ff, d}, 42, -0.3f, 0.3f))}, {}, "ffn.down");
    ValueId res2 = b.op("Add", {res1, down}, {}, "residual2");
    b.output(res2);
    return b.finish();
}

/// Redundancy a cleanup pipeline removes: a duplicated subexpression (CSE), a chain computable
/// at compile time (constant folding) and a branch nobody reads (dead code).
Model cleanupOpportunities() {
    GraphBuilder b("cleanup_opportunities");
    ValueId x = b.input("x", DataType::Float, {1, 16});
    ValueId w = b.constant("fc.weight", randomFloats({16, 16}, 50, -0.3f, 0.3f));
    // CSE: the same MatMul and Relu twice on the same inputs.
    ValueId a1 = b.op("MatMul", {x, w}, {}, "branch_a.matmul");
    ValueId r1 = b.op("Relu", {a1}, {}, "branch_a.relu");
    ValueId a2 = b.op("MatMul", {x, w}, {}, "branch_b.matmul");
    ValueId r2 = b.op("Relu", {a2}, {}, "branch_b.relu");
    ValueId sum = b.op("Add", {r1, r2}, {}, "merge");
    // Constant folding: scale = sqrt(4) * 0.25 is known before the model runs.
    ValueId four = b.scalar("four", 4.f);
    ValueId root = b.op("Sqrt", {four}, {}, "fold.sqrt");
    ValueId scale = b.op("Mul", {root, b.scalar("quarter", 0.25f)}, {}, "fold.mul");
    ValueId scaled = b.op("Mul", {sum, scale}, {}, "apply_scale");
    // Dead code: computed, never read by an output.
    ValueId dead = b.op("Sigmoid", {sum}, {}, "dead.sigmoid");
    b.op("Mul", {dead, b.scalar("dead.factor", 3.f)}, {}, "dead.mul");
    // An Identity a cleanup removes.
    ValueId id = b.op("Identity", {scaled}, {}, "identity");
    b.output(id);
    return b.finish();
}

/// Diamonds and parallel paths: which node dominates which, where paths re-join.
Model branchyDominators() {
    GraphBuilder b("branchy_dominators");
    ValueId x = b.input("x", DataType::Float, {1, 8, 8, 8});
    auto conv = [&](ValueId in, const std::string& n, uint64_t seed, int64_t inChannels = 8) {
        return b.op("Conv", {in, b.constant(n + ".weight", randomFloats({8, inChannels, 1, 1}, seed, -0.4f, 0.4f))},
                    {Attribute::makeInts("kernel_shape", {1, 1})}, n);
    };
    ValueId stem = b.op("Relu", {conv(x, "stem", 60)}, {}, "stem.relu");
    // Diamond 1: two branches re-join at an Add.
    ValueId l = b.op("Relu", {conv(stem, "left", 61)}, {}, "left.relu");
    ValueId r = b.op("Sigmoid", {conv(stem, "right", 62)}, {}, "right.sigmoid");
    ValueId join1 = b.op("Add", {l, r}, {}, "join1");
    // Diamond 2 with a skip path: three paths into a Concat.
    ValueId p1 = conv(join1, "path1", 63);
    ValueId p2 = b.op("Tanh", {conv(conv(join1, "path2a", 64), "path2b", 65)}, {}, "path2.tanh");
    ValueId cat = b.op("Concat", {p1, p2, stem}, {Attribute::makeInt("axis", 1)}, "join2");
    ValueId head = conv(cat, "head", 66, 24);
    // A side exit: a second output leaves from inside the second diamond.
    ValueId side = b.op("GlobalAveragePool", {p2}, {}, "side.pool");
    b.output(head);
    b.output(side);
    return b.finish();
}

/// Conv → BatchNorm would fold, but the Conv's output is also read elsewhere: the raw convolution
/// result must survive, so the fusion is blocked.
Model blockedFusion() {
    GraphBuilder b("blocked_fusion");
    ValueId x = b.input("image", DataType::Float, {1, 3, 16, 16});
    ValueId conv = b.op("Conv", {x, b.constant("conv.weight", randomFloats({8, 3, 3, 3}, 70, -0.5f, 0.5f))},
                        {Attribute::makeInts("pads", {1, 1, 1, 1}), Attribute::makeInts("kernel_shape", {3, 3})}, "conv");
    ValueId bn = b.op("BatchNormalization",
                      {conv, b.constant("bn.scale", randomFloats({8}, 71, 0.5f, 1.5f)), b.constant("bn.bias", randomFloats({8}, 72)),
                       b.constant("bn.mean", randomFloats({8}, 73)), b.constant("bn.var", randomFloats({8}, 74, 0.5f, 2.f))},
                      {Attribute::makeFloat("epsilon", 1e-5f)}, "bn");
    ValueId relu = b.op("Relu", {bn}, {}, "relu");
    // The second consumer of the Conv output: a residual-style tap.
    ValueId tap = b.op("ReduceMean", {conv}, {Attribute::makeInts("axes", {2, 3}), Attribute::makeInt("keepdims", 1)}, "conv_tap.mean");
    ValueId gated = b.op("Mul", {relu, b.op("Sigmoid", {tap}, {}, "conv_tap.gate")}, {}, "gate");
    b.output(gated);
    return b.finish();
}

/// A chain of same-sized activations: every elementwise op can write in place, and buffers of
/// finished values can be shared by later ones.
Model inplaceChain() {
    GraphBuilder b("inplace_chain");
    ValueId x = b.input("x", DataType::Float, {1, 64, 32, 32});
    ValueId c1 = b.op("Conv", {x, b.constant("conv1.weight", randomFloats({64, 64, 1, 1}, 80, -0.2f, 0.2f))},
                      {Attribute::makeInts("kernel_shape", {1, 1})}, "conv1");
    ValueId a = b.op("Relu", {c1}, {}, "relu1");
    ValueId s = b.op("Mul", {a, b.scalar("scale", 0.5f)}, {}, "scale");
    ValueId t = b.op("Add", {s, b.scalar("shift", 0.1f)}, {}, "shift");
    ValueId u = b.op("Sigmoid", {t}, {}, "sigmoid");
    ValueId c2 = b.op("Conv", {u, b.constant("conv2.weight", randomFloats({64, 64, 1, 1}, 81, -0.2f, 0.2f))},
                      {Attribute::makeInts("kernel_shape", {1, 1})}, "conv2");
    ValueId v = b.op("Relu", {c2}, {}, "relu2");
    ValueId w = b.op("Add", {v, a}, {}, "residual");  // keeps relu1's buffer alive: no in-place for it
    ValueId y = b.op("Tanh", {w}, {}, "tanh");
    b.output(y);
    return b.finish();
}

}  // namespace

const std::vector<Example>& all() {
    static const std::vector<Example> examples = {
        {"conv_bn_relu", "Conv → BatchNorm → ReLU",
         "BatchNorm folds into the convolution's weights at inference time; ReLU fuses as an elementwise epilogue.",
         convBnRelu},
        {"transformer_block", "Transformer block (decomposed LayerNorm, GELU)",
         "Exporters write LayerNorm as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add and GELU via Erf: "
         "pattern fusion turns each chain back into one op.",
         transformerBlock},
        {"cleanup_opportunities", "CSE, constant folding and dead code",
         "Two identical MatMul→Relu branches (CSE), Sqrt(4)·0.25 computable ahead of time (constant folding), "
         "a Sigmoid→Mul nobody reads (dead code) and an Identity.",
         cleanupOpportunities},
        {"branchy_dominators", "Branches and diamonds (dominator tree)",
         "Paths split and re-join: a node dominates another when every path from the input passes through it.",
         branchyDominators},
        {"blocked_fusion", "Blocked fusion: Conv output read twice",
         "Conv → BatchNorm cannot fold because the Conv's raw output has a second consumer.",
         blockedFusion},
        {"inplace_chain", "In-place and buffer sharing chain",
         "Same-sized elementwise ops can overwrite their input; a residual keeps one buffer alive longer.",
         inplaceChain},
        {"autodiff", "Reverse-mode autodiff: f(x1, x2) = ln(x1) + x1·x2 − sin(x2)",
         "The lectures' example: Passes → Build Training Graph (loss none) adds the backward graph; "
         "View → Show Values at x1 = 2, x2 = 5 reads the v and v̄ columns off the edges.",
         lectureFunction},
        {"mlp_training", "Training graph of a 3-layer MLP (mse)",
         "Forward Gemm/Relu/MatMul+Add/Tanh/Gemm/Sigmoid, the mse loss, and the backward graph: every backward "
         "node says which forward node it came from and which tensors it saved.",
         mlpTraining},
    };
    return examples;
}

const Example* find(const std::string& id) {
    for (const auto& e : all())
        if (e.id == id) return &e;
    return nullptr;
}

}  // namespace passlens::examples
