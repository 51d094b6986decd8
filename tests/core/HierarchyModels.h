#pragma once
// Small transformer-like models for the hierarchy and hierarchical-layout tests: N identical
// layers (two MatMuls, bias, ReLU, residual Add, decomposed LayerNorm), named the three ways
// exporters name nodes.
#include <string>

#include "examples/Builder.h"

namespace passlens::test {

enum class LayerNaming { Scoped, Flat, Metadata };

/// Ops per layer of layeredModel (Constant-free).
inline constexpr size_t kOpsPerLayer = 14;

inline ir::Model layeredModel(int layers, LayerNaming naming, int hidden = 8) {
    using namespace ir;
    GraphBuilder b("layered");
    ValueId x = b.input("x", DataType::Float, {2, hidden});
    size_t flatCounter = 0;
    auto op = [&](int layer, const std::string& scope, const std::string& type, std::vector<ValueId> in,
                  std::vector<Attribute> attrs = {}) {
        std::string scopes = layer < 0 ? "" : "/encoder/layer." + std::to_string(layer) + "/" + scope;
        std::string name = naming == LayerNaming::Scoped ? scopes + "/" + type + "_" + std::to_string(flatCounter)
                                                        : type + "_" + std::to_string(flatCounter);
        ++flatCounter;
        ValueId out = b.op(type, std::move(in), std::move(attrs), name);
        if (naming == LayerNaming::Metadata && layer >= 0) {
            Node& n = b.graph().node(b.graph().value(out).producer);
            n.metadataProps.push_back({"pkg.torch.onnx.name_scopes",
                                       "['', 'encoder', 'layer." + std::to_string(layer) + "', '" + scope + "']"});
        }
        return out;
    };
    for (int l = 0; l < layers; ++l) {
        const std::string p = "l" + std::to_string(l) + "_";
        ValueId w1 = b.constant(p + "w1", randomFloats({hidden, hidden}, uint64_t(3 * l + 1)));
        ValueId b1 = b.constant(p + "b1", randomFloats({hidden}, uint64_t(3 * l + 2)));
        ValueId w2 = b.constant(p + "w2", randomFloats({hidden, hidden}, uint64_t(3 * l + 3)));
        ValueId h = op(l, "mlp", "MatMul", {x, w1});
        h = op(l, "mlp", "Add", {h, b1});
        h = op(l, "mlp", "Relu", {h});
        h = op(l, "mlp", "MatMul", {h, w2});
        ValueId r = op(l, "mlp", "Add", {h, x});
        // Decomposed LayerNorm over the last axis.
        ValueId mean = op(l, "norm", "ReduceMean", {r}, {Attribute::makeInts("axes", {-1})});
        ValueId d = op(l, "norm", "Sub", {r, mean});
        ValueId two = b.scalar(p + "two", 2.f);
        ValueId sq = op(l, "norm", "Pow", {d, two});
        ValueId var = op(l, "norm", "ReduceMean", {sq}, {Attribute::makeInts("axes", {-1})});
        ValueId eps = b.scalar(p + "eps", 1e-5f);
        ValueId ve = op(l, "norm", "Add", {var, eps});
        ValueId sd = op(l, "norm", "Sqrt", {ve});
        ValueId n = op(l, "norm", "Div", {d, sd});
        ValueId gamma = b.constant(p + "gamma", randomFloats({hidden}, uint64_t(100 + l)));
        ValueId beta = b.constant(p + "beta", randomFloats({hidden}, uint64_t(200 + l)));
        ValueId s = op(l, "norm", "Mul", {n, gamma});
        x = op(l, "norm", "Add", {s, beta});
    }
    b.output(x);
    return b.finish();
}

/// A chain of `nodes` unary ops cycling through a few kinds (no repeated "layers").
inline ir::Model chainModel(int nodes) {
    using namespace ir;
    GraphBuilder b("chain");
    ValueId x = b.input("x", DataType::Float, {4});
    static const char* kinds[] = {"Relu", "Neg", "Abs"};
    for (int i = 0; i < nodes; ++i) x = b.op(kinds[i % 3], {x}, {}, std::string(kinds[i % 3]) + "_" + std::to_string(i));
    b.output(x);
    return b.finish();
}

}  // namespace passlens::test
