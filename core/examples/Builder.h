#pragma once
// Builds small models in code: teaching examples, golden tests, generated benchmarks. It lives in
// examples (not ir) because finish() runs ONNX shape inference, which sits above the IR.
//   GraphBuilder b("conv_bn_relu");
//   auto x = b.input("x", DataType::Float, {1, 3, 8, 8});
//   auto w = b.constant("w", randomFloats({4, 3, 3, 3}, 1));
//   auto y = b.op("Conv", {x, w}, {Attribute::makeInts("pads", {1, 1, 1, 1})});
//   b.output(y);
//   Model m = b.finish();
#include <cstdint>
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::ir {

class GraphBuilder {
public:
    explicit GraphBuilder(std::string graphName, int64_t opset = 17);

    ValueId input(std::string name, DataType t, std::vector<int64_t> dims);
    ValueId inputSymbolic(std::string name, DataType t, std::vector<Dim> dims);
    ValueId constant(std::string name, TensorPtr tensor);   ///< an initializer
    ValueId scalar(std::string name, float v);              ///< float32 scalar initializer
    ValueId ints(std::string name, std::vector<int64_t> v); ///< int64 1-D initializer
    /// One-output node; the output is named after the node ("<name>_out" or "<op>_<n>").
    ValueId op(const std::string& opType, std::vector<ValueId> inputs, std::vector<Attribute> attrs = {},
               std::string name = {}, std::string domain = {});
    std::vector<ValueId> opMulti(const std::string& opType, std::vector<ValueId> inputs, size_t outputs,
                                 std::vector<Attribute> attrs = {}, std::string name = {}, std::string domain = {});
    void output(ValueId v);

    Graph& graph() { return model_.graph; }
    Model& model() { return model_; }
    /// Runs shape inference and the verifier, and returns the model.
    Model finish();

private:
    Model model_;
    size_t counter_ = 0;
};

}  // namespace passlens::ir
