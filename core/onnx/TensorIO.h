#pragma once
// TensorProto files (the input_<i>.pb / output_<i>.pb layout of ONNX's backend test data).
#include <string>
#include <string_view>

#include "ir/Tensor.h"

namespace passlens::onnxio {

/// Reads one serialized TensorProto; BadInput naming the file when it is unreadable or malformed.
ir::TensorPtr readTensorFile(const std::string& path);
/// Writes `t` as one serialized TensorProto (payload inline).
void writeTensorFile(const ir::Tensor& t, const std::string& path);
ir::TensorPtr tensorFromProtoBytes(std::string_view bytes);

}  // namespace passlens::onnxio
