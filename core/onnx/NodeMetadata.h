#pragma once
// NodeProto.metadata_props (field 9, ONNX ≥ 1.16) with a libonnx that predates it: protobuf keeps
// the field as unknown bytes; these read it into the IR and write it back, so exporters' node
// metadata (PyTorch's `pkg.torch.onnx.name_scopes`) survives import and export.
#include <vector>

#include "ir/Graph.h"

namespace onnx { class NodeProto; }

namespace passlens::onnxio {

inline constexpr int kNodeMetadataField = 9;

std::vector<ir::StringPair> readNodeMetadata(const onnx::NodeProto& np);
void writeNodeMetadata(const std::vector<ir::StringPair>& props, onnx::NodeProto& np);

}  // namespace passlens::onnxio
