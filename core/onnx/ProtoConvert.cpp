#include "onnx/ProtoConvert.h"

#include <algorithm>
#include <cstring>
#include <vector>
#include <filesystem>

#include <google/protobuf/unknown_field_set.h>

#include "ir/Error.h"
#include "util/MappedFile.h"

namespace passlens::onnxio {

using namespace passlens::ir;

namespace {

template <class Dst, class Src>
Buffer pack(const Src& field) {
    std::string bytes(field.size() * sizeof(Dst), '\0');
    Dst* out = reinterpret_cast<Dst*>(bytes.data());
    for (int i = 0; i < field.size(); ++i) out[i] = static_cast<Dst>(field[i]);
    return Buffer::fromString(std::move(bytes));
}

/// Packs the typed repeated fields of a TensorProto into raw little-endian bytes.
Buffer packTyped(const onnx::TensorProto& tp, DataType dt) {
    switch (dt) {
    case DataType::Float: return pack<float>(tp.float_data());
    case DataType::Double: return pack<double>(tp.double_data());
    case DataType::Int64: return pack<int64_t>(tp.int64_data());
    case DataType::Int32: return pack<int32_t>(tp.int32_data());
    case DataType::Int16: return pack<int16_t>(tp.int32_data());
    case DataType::Int8: return pack<int8_t>(tp.int32_data());
    case DataType::UInt8: return pack<uint8_t>(tp.int32_data());
    case DataType::UInt16: case DataType::Float16: case DataType::BFloat16: return pack<uint16_t>(tp.int32_data());
    case DataType::Bool: return pack<uint8_t>(tp.int32_data());
    // 8-bit floats: one per int32_data entry; 4-bit types: one packed byte (two elements) per entry.
    case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
    case DataType::Float8E5M2FNUZ: case DataType::UInt4: case DataType::Int4: case DataType::Float4E2M1:
        return pack<uint8_t>(tp.int32_data());
    case DataType::UInt32: return pack<uint32_t>(tp.uint64_data());
    case DataType::UInt64: return pack<uint64_t>(tp.uint64_data());
    case DataType::Complex64: return pack<float>(tp.float_data());
    case DataType::Complex128: return pack<double>(tp.double_data());
    default: return {};
    }
}

/// ONNX Runtime reads a bool stored as any non-zero byte as true; a C++ `bool` may hold only 0 or 1
/// (reading 248 as bool is undefined), so such bytes become 1 here, once, for every later reader.
Buffer normalizedBools(Buffer data) {
    const auto bytes = data.bytes();
    if (std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b <= std::byte{1}; })) return data;
    std::string fixed(bytes.size(), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) fixed[i] = bytes[i] != std::byte{0} ? 1 : 0;
    return Buffer::fromString(std::move(fixed));
}

}  // namespace

TensorPtr TensorLoader::load(onnx::TensorProto& tp) {
    auto t = std::make_shared<Tensor>();
    t->name = tp.name();
    t->docString = tp.doc_string();
    t->unknownFields = unknownFieldsOf(tp);
    if (!isKnownDataType(tp.data_type()))
        throwBadInput("tensor '" + tp.name() + "' has unknown data type " + std::to_string(tp.data_type()));
    t->dtype = static_cast<DataType>(tp.data_type());
    t->dims.assign(tp.dims().begin(), tp.dims().end());
    const int64_t count = checkedElementCount(t->dims, "tensor '" + tp.name() + "'");
    const size_t esize = elementSize(t->dtype);
    if (esize && count > static_cast<int64_t>(SIZE_MAX / esize / 2))
        throwBadInput("tensor '" + tp.name() + "' is too large to hold in memory");
    const size_t expected = storageBytes(t->dtype, static_cast<size_t>(count));
    for (const auto& kv : tp.external_data()) t->external.entries.push_back({kv.key(), kv.value()});

    if (t->dtype == DataType::String) {
        t->strings.assign(tp.string_data().begin(), tp.string_data().end());
        if (static_cast<int64_t>(t->strings.size()) != count)
            throwBadInput("tensor '" + tp.name() + "' has " + std::to_string(t->strings.size()) + " strings for " +
                          std::to_string(count) + " elements");
        return t;
    }
    if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
        t->data = loadExternal(tp, expected);
    } else if (tp.has_raw_data()) {
        t->data = Buffer::fromString(std::move(*tp.mutable_raw_data()));
        tp.clear_raw_data();
    } else {
        t->data = packTyped(tp, t->dtype);
    }
    if (t->data.size() != expected)
        throwBadInput("tensor '" + tp.name() + "' holds " + std::to_string(t->data.size()) + " bytes, but its shape needs " +
                      std::to_string(expected));
    if (t->dtype == DataType::Bool) t->data = normalizedBools(std::move(t->data));
    return t;
}

Buffer TensorLoader::loadExternal(const onnx::TensorProto& tp, size_t expectedBytes) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : tp.external_data()) {
        try {
            if (kv.key() == "location") location = kv.value();
            else if (kv.key() == "offset") offset = std::stoll(kv.value());
            else if (kv.key() == "length") length = std::stoll(kv.value());
        } catch (const std::exception&) {
            throwBadInput("tensor '" + tp.name() + "': external-data " + kv.key() + " '" + kv.value() + "' is not a number");
        }
    }
    if (location.empty()) throwBadInput("tensor '" + tp.name() + "' is external but names no location");
    std::filesystem::path rel(location);
    if (rel.is_absolute() || location.find("..") != std::string::npos)
        throwBadInput("tensor '" + tp.name() + "': external-data location '" + location + "' must stay inside the model's folder");
    std::string path = (std::filesystem::path(baseDir_) / rel).string();
    auto it = files_.find(path);
    if (it == files_.end()) {
        if (!std::filesystem::exists(path))
            throwBadInput("tensor '" + tp.name() + "': external-data file '" + location + "' not found beside the model");
        it = files_.emplace(path, MappedFile::open(path)).first;
    }
    const auto& file = it->second;
    if (length < 0) length = static_cast<int64_t>(expectedBytes);
    if (offset < 0 || static_cast<uint64_t>(offset) + static_cast<uint64_t>(length) > file->size())
        throwBadInput("tensor '" + tp.name() + "': external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
                      ") lies outside '" + location + "' (" + std::to_string(file->size()) + " bytes)");
    return Buffer::view(file->data() + offset, static_cast<size_t>(length), file);
}

TypeInfo typeFromProto(const onnx::TypeProto& tp) {
    TypeInfo t;
    t.denotation = tp.denotation();
    if (tp.value_case() == onnx::TypeProto::VALUE_NOT_SET) return t;
    if (!tp.has_tensor_type()) {
        t.kind = TypeInfo::Kind::Opaque;
        t.opaqueProto = tp.SerializeAsString();
        return t;
    }
    t.kind = TypeInfo::Kind::Tensor;
    const auto& tt = tp.tensor_type();
    t.elemType = isKnownDataType(tt.elem_type()) ? static_cast<DataType>(tt.elem_type()) : DataType::Undefined;
    if (tt.has_shape()) {
        Shape s;
        for (const auto& d : tt.shape().dim()) {
            Dim dim;
            if (d.has_dim_value()) dim.value = d.dim_value();
            else if (d.has_dim_param()) dim.param = d.dim_param();
            dim.denotation = d.denotation();
            s.dims.push_back(std::move(dim));
        }
        t.shape = std::move(s);
    }
    return t;
}

void typeToProto(const TypeInfo& t, onnx::TypeProto& out) {
    switch (t.kind) {
    case TypeInfo::Kind::Unknown: break;
    case TypeInfo::Kind::Opaque: out.ParseFromString(t.opaqueProto); break;
    case TypeInfo::Kind::Tensor: {
        auto* tt = out.mutable_tensor_type();
        tt->set_elem_type(static_cast<int32_t>(t.elemType));
        if (t.shape) {
            auto* sp = tt->mutable_shape();
            for (const auto& d : t.shape->dims) {
                auto* dp = sp->add_dim();
                if (d.value) dp->set_dim_value(*d.value);
                else if (!d.param.empty()) dp->set_dim_param(d.param);
                if (!d.denotation.empty()) dp->set_denotation(d.denotation);
            }
        }
        break;
    }
    }
    if (!t.denotation.empty()) out.set_denotation(t.denotation);
}

void tensorToProto(const Tensor& t, onnx::TensorProto& out) {
    if (!t.name.empty()) out.set_name(t.name);
    if (!t.docString.empty()) out.set_doc_string(t.docString);
    out.set_data_type(static_cast<int32_t>(t.dtype));
    for (int64_t d : t.dims) out.add_dims(d);
    if (t.dtype == DataType::String) {
        for (const auto& s : t.strings) out.add_string_data(s);
        return;
    }
    out.set_raw_data(reinterpret_cast<const char*>(t.data.data()), t.data.size());
}

namespace {
}

std::vector<StringPair> nodeMetadataFromProto(const onnx::NodeProto& np) {
    std::vector<StringPair> props;
    const auto& unknown = np.GetReflection()->GetUnknownFields(np);
    for (int i = 0; i < unknown.field_count(); ++i) {
        const auto& f = unknown.field(i);
        if (f.number() != kNodeMetadataPropsField || f.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
            continue;
        onnx::StringStringEntryProto kv;
        if (kv.ParseFromString(f.length_delimited())) props.push_back({kv.key(), kv.value()});
    }
    return props;
}

std::string unknownFieldsOf(const google::protobuf::Message& msg, int except) {
    const auto& unknown = msg.GetReflection()->GetUnknownFields(msg);
    if (unknown.empty()) return {};
    // An empty message of the same type carrying only these fields serializes them as they were.
    std::unique_ptr<google::protobuf::Message> carrier(msg.New());
    auto* set = carrier->GetReflection()->MutableUnknownFields(carrier.get());
    for (int i = 0; i < unknown.field_count(); ++i)
        if (unknown.field(i).number() != except) set->AddField(unknown.field(i));
    return carrier->SerializeAsString();
}

void restoreUnknownFields(google::protobuf::Message& msg, const std::string& bytes) {
    if (bytes.empty()) return;
    auto* set = msg.GetReflection()->MutableUnknownFields(&msg);
    google::protobuf::UnknownFieldSet extra;
    if (!extra.ParseFromString(bytes)) return;  // only our own import wrote these bytes
    set->MergeFrom(extra);
    std::vector<int> order(static_cast<size_t>(set->field_count()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return set->field(a).number() < set->field(b).number(); });
    google::protobuf::UnknownFieldSet sorted;
    for (int i : order) sorted.AddField(set->field(i));
    set->Clear();
    set->MergeFrom(sorted);
}

void nodeMetadataToProto(const std::vector<StringPair>& props, onnx::NodeProto& np) {
    auto* unknown = np.GetReflection()->MutableUnknownFields(&np);
    for (const auto& p : props) {
        onnx::StringStringEntryProto kv;
        kv.set_key(p.key);
        kv.set_value(p.value);
        unknown->AddLengthDelimited(kNodeMetadataPropsField, kv.SerializeAsString());
    }
}

}  // namespace passlens::onnxio
