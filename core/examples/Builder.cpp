#include "examples/Builder.h"

#include "ir/Verifier.h"
#include "onnx/ShapeInference.h"

namespace passlens::ir {

GraphBuilder::GraphBuilder(std::string graphName, int64_t opset) {
    model_.irVersion = 8;
    model_.producerName = "passlens";
    model_.graph.name = std::move(graphName);
    model_.opsetImports.push_back({"", opset});
}

ValueId GraphBuilder::input(std::string name, DataType t, std::vector<int64_t> dims) {
    Shape s;
    for (int64_t d : dims) s.dims.push_back(Dim::of(d));
    return model_.graph.addInput(std::move(name), TypeInfo::tensor(t, s));
}

ValueId GraphBuilder::inputSymbolic(std::string name, DataType t, std::vector<Dim> dims) {
    return model_.graph.addInput(std::move(name), TypeInfo::tensor(t, Shape{std::move(dims)}));
}

ValueId GraphBuilder::constant(std::string name, TensorPtr tensor) {
    return model_.graph.addInitializer(std::move(name), std::move(tensor));
}

ValueId GraphBuilder::scalar(std::string name, float v) { return constant(std::move(name), floatTensor({}, {v})); }

ValueId GraphBuilder::ints(std::string name, std::vector<int64_t> v) {
    int64_t n = static_cast<int64_t>(v.size());
    return constant(std::move(name), int64Tensor({n}, std::move(v)));
}

ValueId GraphBuilder::op(const std::string& opType, std::vector<ValueId> inputs, std::vector<Attribute> attrs,
                         std::string name, std::string domain) {
    return opMulti(opType, std::move(inputs), 1, std::move(attrs), std::move(name), std::move(domain)).front();
}

std::vector<ValueId> GraphBuilder::opMulti(const std::string& opType, std::vector<ValueId> inputs, size_t outputs,
                                           std::vector<Attribute> attrs, std::string name, std::string domain) {
    if (name.empty()) name = opType + "_" + std::to_string(counter_++);
    std::vector<ValueId> outs;
    for (size_t i = 0; i < outputs; ++i)
        outs.push_back(model_.graph.addValue(model_.graph.uniqueValueName(outputs == 1 ? name + "_out" : name + "_out" + std::to_string(i))));
    model_.graph.addNode(opType, std::move(inputs), outs, std::move(attrs), std::move(name), std::move(domain));
    return outs;
}

void GraphBuilder::output(ValueId v) { model_.graph.markOutput(v); }

Model GraphBuilder::finish() {
    onnxio::inferShapes(model_);
    verifyOrThrow(model_);
    return std::move(model_);
}

}  // namespace passlens::ir
