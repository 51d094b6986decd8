#pragma once
// Full-size exports committed without their weights (tests/models/weightless, written by
// tests/models/generate_weightless.py): the graph inputs named in the metadata entry
// `passlens.weightless` are turned back into initializers holding seeded values (uniform, scaled
// by 1/sqrt(fan-in) so activations stay finite), then the model is imported as any other.
#include <onnx/onnx_pb.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

#include "onnx/Import.h"

namespace passlens::test {

inline std::string weightlessDir() { return std::string(PASSLENS_FIXTURES_DIR) + "/weightless"; }

/// `file` in tests/models/weightless with its weights refilled (deterministic: same values every run).
inline ir::Model loadWeightless(const std::string& file) {
    const std::string path = weightlessDir() + "/" + file;
    std::ifstream in(path, std::ios::binary);
    onnx::ModelProto proto;
    if (!in || !proto.ParseFromIstream(&in)) throw std::runtime_error("cannot read " + path);
    std::set<std::string> names;
    for (const auto& entry : proto.metadata_props())
        if (entry.key() == "passlens.weightless") {
            std::stringstream list(entry.value());
            for (std::string name; std::getline(list, name, ',');) names.insert(name);
        }
    if (names.empty()) throw std::runtime_error(path + " has no passlens.weightless entry");
    auto* graph = proto.mutable_graph();
    uint32_t state = 7;
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
    for (const auto& input : graph->input()) {
        if (!names.count(input.name())) {
            *kept.Add() = input;
            continue;
        }
        const auto& shape = input.type().tensor_type().shape();
        auto* t = graph->add_initializer();
        t->set_name(input.name());
        t->set_data_type(onnx::TensorProto::FLOAT);
        int64_t count = 1, fanIn = 1;
        for (int d = 0; d < shape.dim_size(); ++d) {
            t->add_dims(shape.dim(d).dim_value());
            count *= shape.dim(d).dim_value();
            if (d > 0) fanIn *= shape.dim(d).dim_value();
        }
        const bool vector = shape.dim_size() <= 1;  // norm weights and biases: around 1 and 0.5
        const float scale = vector ? 0.5f : 1.0f / std::sqrt(static_cast<float>(std::max<int64_t>(1, fanIn)));
        std::string raw(static_cast<size_t>(count) * sizeof(float), '\0');
        auto* values = reinterpret_cast<float*>(raw.data());
        for (int64_t k = 0; k < count; ++k) {
            state = state * 1664525u + 1013904223u;
            const float u = static_cast<float>(state >> 8) / 16777216.0f * 2.0f - 1.0f;  // [-1, 1)
            values[k] = vector ? 1.0f + scale * u : scale * u;
        }
        t->set_raw_data(raw);
    }
    graph->mutable_input()->Swap(&kept);
    std::string bytes;
    proto.SerializeToString(&bytes);
    return onnxio::importModelBytes(bytes, weightlessDir());
}

}  // namespace passlens::test
