#pragma once
// Rank preconditions that libonnx's shape-inference functions assume without checking.
// Several of them (Gemm before opset 11, ConvTranspose, the old RNNs, ...) index an input's dims
// directly: a model that declares a rank-1 Gemm input makes InferShapes read past the end of a
// protobuf array and crash the process. So before any InferShapes call, every node whose spec
// fixes its inputs' ranks is checked against the ranks the model declares, and the window
// attributes of convolutions and pools (strides, dilations, kernel_shape) must be positive: libonnx
// divides by them.
#include <optional>
#include <string>

namespace onnx {
class GraphProto;
}

namespace passlens::onnxio {

/// The first node (main graph first, then subgraphs) whose declared input ranks break its op's
/// spec, described as "node 'gemm1' (Gemm): input 'B' has rank 1, Gemm takes a 2-D matrix";
/// nullopt when every declared rank fits. Ranks come from inputs, value_info, outputs,
/// initializers and Constant nodes; undeclared ranks pass. Also "node 'conv1' (Conv): strides has 0;
/// every element of strides must be positive".
std::optional<std::string> findRankHazard(const onnx::GraphProto& graph);

}  // namespace passlens::onnxio
