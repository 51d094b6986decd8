#include "onnx/Export.h"

#include <onnx/onnx_pb.h>
#include <google/protobuf/arena.h>

#include <filesystem>
#include <fstream>

#include "ir/Error.h"
#include "onnx/ProtoConvert.h"

namespace passlens::onnxio {

using namespace passlens::ir;

namespace {

/// Streams large tensor payloads into one external-data file while the proto is built.
class ExternalWriter {
public:
    ExternalWriter(const std::string& dir, const ExportOptions& o) : options_(o) {
        if (o.externalDataFile.empty()) return;
        path_ = (std::filesystem::path(dir) / o.externalDataFile).string();
        out_.open(path_, std::ios::binary | std::ios::trunc);
        if (!out_) throw Error(ErrorKind::BadInput, "cannot write external data file '" + path_ + "'");
    }
    bool active() const { return out_.is_open(); }

    /// Fills `tp` with the tensor, inline or as an external reference.
    void write(const Tensor& t, onnx::TensorProto& tp) {
        if (!active() || t.dtype == DataType::String || t.data.size() < options_.externalThreshold) {
            tensorToProto(t, tp);
            return;
        }
        Tensor meta = t;
        meta.data = {};
        tensorToProto(meta, tp);
        tp.clear_raw_data();
        // Align each payload to 4 KiB so readers can map tensors directly.
        const uint64_t aligned = (written_ + 4095) / 4096 * 4096;
        if (aligned > written_) {
            std::string pad(aligned - written_, '\0');
            out_.write(pad.data(), static_cast<std::streamsize>(pad.size()));
        }
        out_.write(reinterpret_cast<const char*>(t.data.data()), static_cast<std::streamsize>(t.data.size()));
        if (!out_) throw Error(ErrorKind::BadInput, "write failed on '" + path_ + "'");
        written_ = aligned + t.data.size();
        tp.set_data_location(onnx::TensorProto::EXTERNAL);
        auto add = [&](const std::string& k, const std::string& v) {
            auto* e = tp.add_external_data();
            e->set_key(k);
            e->set_value(v);
        };
        add("location", options_.externalDataFile);
        add("offset", std::to_string(aligned));
        add("length", std::to_string(t.data.size()));
    }

private:
    const ExportOptions& options_;
    std::string path_;
    std::ofstream out_;
    uint64_t written_ = 0;
};

class GraphExporter {
public:
    GraphExporter(ExternalWriter* ext, bool valueInfo) : ext_(ext), valueInfo_(valueInfo) {}

    void tensor(const Tensor& t, onnx::TensorProto& tp) {
        if (ext_) ext_->write(t, tp);
        else tensorToProto(t, tp);
        restoreUnknownFields(tp, t.unknownFields);
    }

    void run(const Graph& g, onnx::GraphProto& gp) {
        gp.set_name(g.name);
        if (!g.docString.empty()) gp.set_doc_string(g.docString);
        auto valueInfo = [&](const Value& v, onnx::ValueInfoProto& vi) {
            vi.set_name(v.name);
            if (v.type.known()) typeToProto(v.type, *vi.mutable_type());
            if (!v.docString.empty()) vi.set_doc_string(v.docString);
        };
        for (ValueId v : g.inputs()) valueInfo(g.value(v), *gp.add_input());
        for (ValueId v : g.outputs()) valueInfo(g.value(v), *gp.add_output());
        for (ValueId v : g.initializerOrder()) {
            const Value& val = g.value(v);
            auto* tp = gp.add_initializer();
            tensor(*val.initializer, *tp);
            tp->set_name(val.name);
        }
        for (const auto& sp : g.sparseInitializers) gp.add_sparse_initializer()->ParseFromString(sp);
        if (valueInfo_) {
            // File-order entries first, then any typed intermediate the file did not describe.
            std::vector<bool> written(g.valueIdLimit(), false);
            // Entries the file (or inference) declared come back as they were, even for graph
            // outputs; then any typed intermediate that has none.
            auto emit = [&](ValueId v) {
                written[v] = true;
                valueInfo(g.value(v), *gp.add_value_info());
            };
            for (ValueId v : g.valueInfoOrder())
                if (!written[v]) emit(v);
            for (NodeId n : g.nodeOrder())
                for (ValueId v : g.node(n).outputs) {
                    if (v == kNone || written[v]) continue;
                    const Value& val = g.value(v);
                    if (!val.isGraphOutput && val.type.known()) emit(v);
                }
        }
        for (NodeId n : g.nodeOrder()) node(g, g.node(n), *gp.add_node());
        restoreUnknownFields(gp, g.unknownFields);
    }

    void node(const Graph& g, const Node& n, onnx::NodeProto& np) {
        for (ValueId v : n.inputs) np.add_input(v == kNone ? std::string() : g.value(v).name);
        for (ValueId v : n.outputs) np.add_output(v == kNone ? std::string() : g.value(v).name);
        if (!n.name.empty()) np.set_name(n.name);
        np.set_op_type(n.opType);
        if (!n.domain.empty()) np.set_domain(n.domain);
        if (!n.docString.empty()) np.set_doc_string(n.docString);
        for (const auto& a : n.attributes) attribute(a, *np.add_attribute());
        nodeMetadataToProto(n.metadataProps, np);
        restoreUnknownFields(np, n.unknownFields);
    }

    void attribute(const Attribute& a, onnx::AttributeProto& ap) {
        ap.set_name(a.name);
        if (!a.refAttrName.empty()) ap.set_ref_attr_name(a.refAttrName);
        if (!a.docString.empty()) ap.set_doc_string(a.docString);
        if (a.kind != AttrKind::Undefined) ap.set_type(static_cast<onnx::AttributeProto::AttributeType>(a.kind));
        switch (a.kind) {
        case AttrKind::Float: ap.set_f(a.f); break;
        case AttrKind::Int: ap.set_i(a.i); break;
        case AttrKind::String: ap.set_s(a.s); break;
        case AttrKind::Tensor: tensor(*a.t, *ap.mutable_t()); break;
        case AttrKind::Graph: run(*a.g, *ap.mutable_g()); break;
        case AttrKind::Floats: for (float f : a.floats) ap.add_floats(f); break;
        case AttrKind::Ints: for (int64_t i : a.ints) ap.add_ints(i); break;
        case AttrKind::Strings: for (const auto& s : a.strings) ap.add_strings(s); break;
        case AttrKind::Tensors: for (const auto& t : a.tensors) tensor(*t, *ap.add_tensors()); break;
        case AttrKind::Graphs: for (const auto& g : a.graphs) run(*g, *ap.add_graphs()); break;
        case AttrKind::SparseTensor: if (!a.opaque.empty()) ap.mutable_sparse_tensor()->ParseFromString(a.opaque[0]); break;
        case AttrKind::SparseTensors: for (const auto& s : a.opaque) ap.add_sparse_tensors()->ParseFromString(s); break;
        case AttrKind::TypeProto: if (!a.opaque.empty()) ap.mutable_tp()->ParseFromString(a.opaque[0]); break;
        case AttrKind::TypeProtos: for (const auto& s : a.opaque) ap.add_type_protos()->ParseFromString(s); break;
        case AttrKind::Undefined: break;
        }
    }

private:
    ExternalWriter* ext_;
    bool valueInfo_;
};

void exportWith(const Model& m, onnx::ModelProto& mp, ExternalWriter* ext, bool valueInfo) {
    mp.set_ir_version(m.irVersion);
    if (!m.producerName.empty()) mp.set_producer_name(m.producerName);
    if (!m.producerVersion.empty()) mp.set_producer_version(m.producerVersion);
    if (!m.domain.empty()) mp.set_domain(m.domain);
    if (m.modelVersion) mp.set_model_version(m.modelVersion);
    if (!m.docString.empty()) mp.set_doc_string(m.docString);
    for (const auto& op : m.opsetImports) {
        auto* o = mp.add_opset_import();
        if (op.domainWritten || !op.domain.empty()) o->set_domain(op.domain);
        o->set_version(op.version);
    }
    for (const auto& kv : m.metadataProps) {
        auto* e = mp.add_metadata_props();
        e->set_key(kv.key);
        e->set_value(kv.value);
    }
    for (const auto& ti : m.trainingInfo) mp.add_training_info()->ParseFromString(ti);
    GraphExporter ge(ext, valueInfo);
    for (const auto& f : m.functions) {
        auto* fp = mp.add_functions();
        fp->set_name(f.name);
        fp->set_domain(f.domain);
        if (!f.docString.empty()) fp->set_doc_string(f.docString);
        for (const auto& a : f.attributeNames) fp->add_attribute(a);
        for (const auto& op : f.opsetImports) {
            auto* o = fp->add_opset_import();
            if (op.domainWritten || !op.domain.empty()) o->set_domain(op.domain);
            o->set_version(op.version);
        }
        const Graph& body = *f.body;
        for (ValueId v : body.inputs()) fp->add_input(body.value(v).name);
        for (ValueId v : body.outputs()) fp->add_output(body.value(v).name);
        for (NodeId n : body.nodeOrder()) ge.node(body, body.node(n), *fp->add_node());
        restoreUnknownFields(*fp, f.unknownFields);
    }
    ge.run(m.graph, *mp.mutable_graph());
    restoreUnknownFields(mp, m.unknownFields);
}

}  // namespace

void exportToProto(const Model& m, onnx::ModelProto& out) { exportWith(m, out, nullptr, true); }

std::string exportModelBytes(const Model& m) {
    google::protobuf::Arena arena;  // a 24k-node proto frees in one go rather than per message
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    exportToProto(m, mp);
    std::string bytes;
    if (!mp.SerializeToString(&bytes))
        throw Error(ErrorKind::BadInput, "model is too large to serialize inline (over 2 GB); export with external data");
    return bytes;
}

void exportModelFile(const Model& m, const std::string& path, const ExportOptions& options) {
    std::string dir = std::filesystem::path(path).parent_path().string();
    ExternalWriter ext(dir.empty() ? "." : dir, options);
    google::protobuf::Arena arena;
    onnx::ModelProto& mp = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
    exportWith(m, mp, &ext, options.writeValueInfo);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorKind::BadInput, "cannot write '" + path + "'");
    if (!mp.SerializeToOstream(&out) || !out.flush())
        throw Error(ErrorKind::BadInput, "failed to write '" + path + "' (model over 2 GB needs external data)");
}

}  // namespace passlens::onnxio
