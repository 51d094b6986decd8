#pragma once
// Conversions of the leaf protobuf types (tensors, types) shared by import and export.
// Only core/onnx includes protobuf headers; the rest of the engine sees the IR.
#include <memory>
#include <string>
#include <unordered_map>

#include <onnx/onnx_pb.h>

#include "ir/Graph.h"
#include "ir/Tensor.h"
#include "ir/Type.h"

namespace passlens { class MappedFile; }

namespace passlens::onnxio {

/// Loads TensorProtos into IR tensors. raw_data is moved out of the proto (no copy); typed
/// fields are packed into raw bytes; external data is mapped once per file and shared.
class TensorLoader {
public:
    explicit TensorLoader(std::string baseDir) : baseDir_(std::move(baseDir)) {}
    ir::TensorPtr load(onnx::TensorProto& tp);

private:
    ir::Buffer loadExternal(const onnx::TensorProto& tp, size_t expectedBytes);
    std::string baseDir_;
    std::unordered_map<std::string, std::shared_ptr<const MappedFile>> files_;
};

ir::TypeInfo typeFromProto(const onnx::TypeProto& tp);
void typeToProto(const ir::TypeInfo& t, onnx::TypeProto& out);
/// Writes the tensor inline (raw_data / string_data).
void tensorToProto(const ir::Tensor& t, onnx::TensorProto& out);

/// NodeProto.metadata_props (field 9, ONNX 1.16+; PyTorch writes `pkg.torch.onnx.name_scopes` there).
/// libonnx 1.12 predates the field, so protobuf keeps it among the unknown fields: these read and
/// write it there, byte for byte as a newer library would.
constexpr int kNodeMetadataPropsField = 9;
std::vector<ir::StringPair> nodeMetadataFromProto(const onnx::NodeProto& np);
void nodeMetadataToProto(const std::vector<ir::StringPair>& props, onnx::NodeProto& np);

/// The fields of `msg` that libonnx 1.12's protobuf does not know (IR 9–11 additions such as
/// FunctionProto.overload or GraphProto.metadata_props), serialized in wire format; `except`
/// leaves out one field number that the caller models itself.
std::string unknownFieldsOf(const google::protobuf::Message& msg, int except = 0);
/// Adds such bytes back to `msg` and orders all its unknown fields by field number, as a newer
/// library writes them, so a file round-trips byte for byte.
void restoreUnknownFields(google::protobuf::Message& msg, const std::string& bytes);

}  // namespace passlens::onnxio
