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

Model mlpTraining() {
    autodiff::AutodiffOptions o;
    o.loss = "mse";
    Model m = autodiff::makeTrainingModel(mlpForward(), o);
    m.graph.name = "mlp_training";
    return m;
}

}  // namespace passlens::examples
