#include "onnx/NodeMetadata.h"

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

namespace passlens::onnxio {

std::vector<ir::StringPair> readNodeMetadata(const onnx::NodeProto& np) {
    std::vector<ir::StringPair> out;
    const auto& unknown = np.GetReflection()->GetUnknownFields(np);
    for (int i = 0; i < unknown.field_count(); ++i) {
        const auto& f = unknown.field(i);
        if (f.number() != kNodeMetadataField || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
            continue;
        onnx::StringStringEntryProto entry;
        if (entry.ParseFromString(f.length_delimited())) out.push_back({entry.key(), entry.value()});
    }
    return out;
}

void writeNodeMetadata(const std::vector<ir::StringPair>& props, onnx::NodeProto& np) {
    auto* unknown = np.GetReflection()->MutableUnknownFields(&np);
    for (const auto& kv : props) {
        onnx::StringStringEntryProto entry;
        entry.set_key(kv.key);
        entry.set_value(kv.value);
        unknown->AddLengthDelimited(kNodeMetadataField, entry.SerializeAsString());
    }
}

}  // namespace passlens::onnxio
