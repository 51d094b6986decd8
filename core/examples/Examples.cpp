#include "examples/Examples.h"

#include "ir/Builder.h"

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

}  // namespace

const std::vector<Example>& all() {
    static const std::vector<Example> examples = {
        {"conv_bn_relu", "Conv → BatchNorm → ReLU",
         "BatchNorm folds into the convolution's weights at inference time; ReLU fuses as an elementwise epilogue.",
         convBnRelu},
    };
    return examples;
}

const Example* find(const std::string& id) {
    for (const auto& e : all())
        if (e.id == id) return &e;
    return nullptr;
}

}  // namespace passlens::examples
