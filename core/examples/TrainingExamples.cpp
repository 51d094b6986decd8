// Teaching examples for reverse-mode automatic differentiation (the training lecture).
#include "examples/TrainingExamples.h"

#include "autodiff/Autodiff.h"
#include "examples/Builder.h"

namespace passlens::examples {

using namespace passlens::ir;

Model lectureFunction() {
    // f(x1, x2) = ln(x1) + x1·x2 − sin(x2), with the lecture's intermediate names v1..v5.
    GraphBuilder b("autodiff");
    ValueId x1 = b.input("x1", DataType::Float, {1});
    ValueId x2 = b.input("x2", DataType::Float, {1});
    ValueId v1 = b.op("Log", {x1}, {}, "v1");
    ValueId v2 = b.op("Mul", {x1, x2}, {}, "v2");
    ValueId v3 = b.op("Sin", {x2}, {}, "v3");
    ValueId v4 = b.op("Add", {v1, v2}, {}, "v4");
    ValueId v5 = b.op("Sub", {v4, v3}, {}, "v5");
    b.graph().renameValue(v5, "f");
    b.output(v5);
    return b.finish();
}

Model mlpForward() {
    // 3 layers: Gemm → Relu → MatMul+Add → Tanh → Gemm → Sigmoid.
    GraphBuilder b("mlp");
    ValueId x = b.input("x", DataType::Float, {4, 8});
    ValueId h1 = b.op("Gemm", {x, b.constant("fc1.weight", randomFloats({16, 8}, 90, -0.4f, 0.4f)),
                               b.constant("fc1.bias", randomFloats({16}, 91, -0.1f, 0.1f))},
                      {Attribute::makeInt("transB", 1)}, "fc1");
    ValueId a1 = b.op("Relu", {h1}, {}, "relu1");
    ValueId m2 = b.op("MatMul", {a1, b.constant("fc2.weight", randomFloats({16, 12}, 92, -0.4f, 0.4f))}, {}, "fc2");
    ValueId h2 = b.op("Add", {m2, b.constant("fc2.bias", randomFloats({12}, 93, -0.1f, 0.1f))}, {}, "fc2.bias_add");
    ValueId a2 = b.op("Tanh", {h2}, {}, "tanh2");
    ValueId h3 = b.op("Gemm", {a2, b.constant("fc3.weight", randomFloats({12, 3}, 94, -0.4f, 0.4f)),
                               b.constant("fc3.bias", randomFloats({3}, 95, -0.1f, 0.1f))},
                      {}, "fc3");
    ValueId y = b.op("Sigmoid", {h3}, {}, "sigmoid3");
    b.graph().renameValue(y, "y");
    b.output(y);
    return b.finish();
}

Model cnnForward() {
    // Conv(pad 1) → Relu → MaxPool → Conv → Sigmoid → AveragePool → Flatten → Gemm, 4 classes.
    GraphBuilder b("small_cnn");
    ValueId x = b.input("image", DataType::Float, {2, 1, 8, 8});
    ValueId c1 = b.op("Conv", {x, b.constant("conv1.weight", randomFloats({3, 1, 3, 3}, 300, -0.6f, 0.6f)),
                               b.constant("conv1.bias", randomFloats({3}, 301, -0.1f, 0.1f))},
                      {Attribute::makeInts("pads", {1, 1, 1, 1})}, "conv1");
    ValueId r1 = b.op("Relu", {c1}, {}, "relu1");
    ValueId p1 = b.op("MaxPool", {r1}, {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {2, 2})}, "pool1");
    ValueId c2 = b.op("Conv", {p1, b.constant("conv2.weight", randomFloats({4, 3, 3, 3}, 302, -0.5f, 0.5f)),
                               b.constant("conv2.bias", randomFloats({4}, 303, -0.1f, 0.1f))},
                      {}, "conv2");
    ValueId s2 = b.op("Sigmoid", {c2}, {}, "sigmoid2");
    ValueId p2 = b.op("AveragePool", {s2}, {Attribute::makeInts("kernel_shape", {2, 2}), Attribute::makeInts("strides", {2, 2})}, "pool2");
    ValueId flat = b.op("Flatten", {p2}, {}, "flatten");
    ValueId logits = b.op("Gemm", {flat, b.constant("fc.weight", randomFloats({4, 4}, 304, -0.5f, 0.5f)),
                                   b.constant("fc.bias", randomFloats({4}, 305, -0.1f, 0.1f))},
                          {Attribute::makeInt("transB", 1)}, "fc");
    b.graph().renameValue(logits, "logits");
    b.output(logits);
    return b.finish();
}

Model cnnTraining() {
    autodiff::AutodiffOptions o;
    o.loss = "cross-entropy";
    Model m = autodiff::makeTrainingModel(cnnForward(), o);
    m.graph.name = "cnn_training";
    return m;
}

Model deepMlpForward(int layers, int64_t width, int64_t batch) {
    // Gemm(transB) → Relu per layer, equal width, no Relu after the last Gemm.
    GraphBuilder b("mlp" + std::to_string(layers));
    ValueId h = b.input("x", DataType::Float, {batch, width});
    const float scale = 1.0f / static_cast<float>(width);
    for (int i = 1; i <= layers; ++i) {
        const std::string fc = "fc" + std::to_string(i);
        const uint64_t seed = 500 + 2 * static_cast<uint64_t>(i);
        h = b.op("Gemm", {h, b.constant(fc + ".weight", randomFloats({width, width}, seed, -2 * scale, 2 * scale)),
                          b.constant(fc + ".bias", randomFloats({width}, seed + 1, -0.1f, 0.1f))},
                 {Attribute::makeInt("transB", 1)}, fc);
        if (i < layers) h = b.op("Relu", {h}, {}, "relu" + std::to_string(i));
    }
    b.graph().renameValue(h, "y");
    b.output(h);
    return b.finish();
}

Model deepMlpTraining(int layers, int64_t width, int64_t batch) {
    autodiff::AutodiffOptions o;
    o.loss = "mse";
    Model m = autodiff::makeTrainingModel(deepMlpForward(layers, width, batch), o);
    m.graph.name = "mlp" + std::to_string(layers) + "_training";
    return m;
}

Model mlp16Training() { return deepMlpTraining(16, 128, 64); }

Model mlpTraining() {
    autodiff::AutodiffOptions o;
    o.loss = "mse";
    Model m = autodiff::makeTrainingModel(mlpForward(), o);
    m.graph.name = "mlp_training";
    return m;
}

}  // namespace passlens::examples
