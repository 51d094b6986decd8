#include "onnx/Import.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <climits>
#include <cstring>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "ir/Error.h"
#include "ir/Verifier.h"
#include "onnx/ProtoConvert.h"
#include "shape/ShapeEngine.h"
#include "onnx/InferenceGuards.h"
#include "onnx/NewerOpsets.h"
#include "onnx/SchemaValidation.h"
#include "ir/NhwcDomain.h"
#include "util/MappedFile.h"

namespace passlens::onnxio {

using namespace passlens::ir;

namespace {

// ---- graph conversion ---------------------------------------------------------------------------

class GraphImporter {
public:
    GraphImporter(TensorLoader& loader, std::vector<const Graph*> outer) : loader_(loader), outer_(std::move(outer)) {}

    std::shared_ptr<Graph> run(onnx::GraphProto& gp) {
        auto g = std::make_shared<Graph>();
        g->name = gp.name();
        g->docString = gp.doc_string();
        g->unknownFields = unknownFieldsOf(gp);

        std::unordered_map<std::string, const onnx::ValueInfoProto*> infoByName;
        for (const auto& vi : gp.value_info()) infoByName.emplace(vi.name(), &vi);

        // Declare every name this graph defines before wiring nodes, so a node may read a value
        // produced later in the list (the verifier reports the cycle or order, not the importer).
        for (const auto& in : gp.input()) {
            if (g->findValue(in.name())) throwBadInput("graph '" + gp.name() + "' lists input '" + in.name() + "' twice");
            ValueId v = g->addInput(in.name(), typeFromProto(in.type()));
            g->value(v).docString = in.doc_string();
        }
        for (auto& tp : *gp.mutable_initializer()) {
            TensorPtr t = loader_.load(tp);
            if (auto existing = g->findValue(tp.name())) {
                if (!g->value(*existing).isGraphInput || g->value(*existing).initializer)
                    throwBadInput("initializer '" + tp.name() + "' is defined twice");
                g->setInitializer(*existing, t);
            } else {
                g->addInitializer(tp.name(), t);
            }
        }
        for (const auto& sp : gp.sparse_initializer()) g->sparseInitializers.push_back(sp.SerializeAsString());
        for (const auto& np : gp.node())
            for (const auto& out : np.output()) {
                if (out.empty()) continue;
                if (auto existing = g->findValue(out)) {
                    const Value& ev = g->value(*existing);
                    std::string prev = ev.isGraphInput ? "a graph input" : ev.initializer ? "an initializer" : "another node";
                    throwBadInput("node '" + nodeLabel(np) + "' output '" + out + "' is already defined by " + prev);
                }
                g->addValue(out);
            }

        for (const auto& vi : gp.value_info()) {
            auto v = g->findValue(vi.name());
            if (!v) continue;  // value_info of a name nothing defines: re-created below as a dangling entry
            Value& val = g->value(*v);
            if (!val.isGraphInput) val.type = typeFromProto(vi.type());
            val.docString = vi.doc_string();
            g->noteValueInfo(*v);
        }

        for (auto& np : *gp.mutable_node()) {
            std::vector<ValueId> ins, outs;
            for (const auto& in : np.input()) ins.push_back(in.empty() ? kNone : resolve(*g, in));
            for (const auto& out : np.output()) outs.push_back(out.empty() ? kNone : *g->findValue(out));
            std::vector<Attribute> attrs;
            for (auto& ap : *np.mutable_attribute()) attrs.push_back(convertAttribute(ap, *g));
            NodeId id = g->addNode(np.op_type(), std::move(ins), std::move(outs), std::move(attrs), np.name(), np.domain());
            g->node(id).docString = np.doc_string();
            g->node(id).metadataProps = nodeMetadataFromProto(np);
            g->node(id).unknownFields = unknownFieldsOf(np, kNodeMetadataPropsField);
        }

        std::vector<ValueId> outs;
        for (const auto& out : gp.output()) {
            ValueId v = resolve(*g, out.name());
            Value& val = g->value(v);
            TypeInfo declared = typeFromProto(out.type());
            if (declared.known()) val.type = declared;
            if (!out.doc_string().empty()) val.docString = out.doc_string();
            outs.push_back(v);
        }
        g->setOutputs(std::move(outs));
        // Orphan value_info entries (names nothing defines) are kept so export loses nothing.
        for (const auto& vi : gp.value_info())
            if (!g->findValue(vi.name())) {
                ValueId v = g->addValue(vi.name(), typeFromProto(vi.type()));
                g->noteValueInfo(v);
            }
        return g;
    }

private:
    static std::string nodeLabel(const onnx::NodeProto& np) { return np.name().empty() ? np.op_type() : np.name(); }

    ValueId resolve(Graph& g, const std::string& name) {
        if (auto v = g.findValue(name)) return *v;
        for (auto it = outer_.rbegin(); it != outer_.rend(); ++it)
            if ((*it)->findValue(name)) return g.addOuterScopeValue(name);
        return g.addValue(name);  // dangling: the verifier names the node that reads it
    }

    Attribute convertAttribute(onnx::AttributeProto& ap, const Graph& current) {
        Attribute a;
        a.name = ap.name();
        a.refAttrName = ap.ref_attr_name();
        a.docString = ap.doc_string();
        a.kind = static_cast<AttrKind>(ap.type());
        auto subgraph = [&](onnx::GraphProto& sg) {
            std::vector<const Graph*> scopes = outer_;
            scopes.push_back(&current);
            GraphImporter inner(loader_, scopes);
            return inner.run(sg);
        };
        switch (a.kind) {
        case AttrKind::Float: a.f = ap.f(); break;
        case AttrKind::Int: a.i = ap.i(); break;
        case AttrKind::String: a.s = ap.s(); break;
        case AttrKind::Tensor: a.t = loader_.load(*ap.mutable_t()); break;
        case AttrKind::Graph: a.g = subgraph(*ap.mutable_g()); break;
        case AttrKind::Floats: a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
        case AttrKind::Ints: a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
        case AttrKind::Strings: a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
        case AttrKind::Tensors: for (auto& t : *ap.mutable_tensors()) a.tensors.push_back(loader_.load(t)); break;
        case AttrKind::Graphs: for (auto& sg : *ap.mutable_graphs()) a.graphs.push_back(subgraph(sg)); break;
        case AttrKind::SparseTensor: a.opaque.push_back(ap.sparse_tensor().SerializeAsString()); break;
        case AttrKind::SparseTensors: for (const auto& s : ap.sparse_tensors()) a.opaque.push_back(s.SerializeAsString()); break;
        case AttrKind::TypeProto: a.opaque.push_back(ap.tp().SerializeAsString()); break;
        case AttrKind::TypeProtos: for (const auto& t : ap.type_protos()) a.opaque.push_back(t.SerializeAsString()); break;
        case AttrKind::Undefined: inferAttributeKind(ap, a, current); break;
        }
        return a;
    }

    // IR version 1 files may omit AttributeProto.type; infer it from which field is set.
    void inferAttributeKind(onnx::AttributeProto& ap, Attribute& a, const Graph& current) {
        if (!ap.ref_attr_name().empty()) return;
        if (ap.has_f()) { a.kind = AttrKind::Float; a.f = ap.f(); }
        else if (ap.has_i()) { a.kind = AttrKind::Int; a.i = ap.i(); }
        else if (ap.has_s()) { a.kind = AttrKind::String; a.s = ap.s(); }
        else if (ap.has_t()) { a.kind = AttrKind::Tensor; a.t = loader_.load(*ap.mutable_t()); }
        else if (ap.floats_size()) { a.kind = AttrKind::Floats; a.floats.assign(ap.floats().begin(), ap.floats().end()); }
        else if (ap.ints_size()) { a.kind = AttrKind::Ints; a.ints.assign(ap.ints().begin(), ap.ints().end()); }
        else if (ap.strings_size()) { a.kind = AttrKind::Strings; a.strings.assign(ap.strings().begin(), ap.strings().end()); }
        else if (ap.has_g()) { ap.set_type(onnx::AttributeProto::GRAPH); a = convertAttribute(ap, current); }
        else throwBadInput("attribute '" + ap.name() + "' has no type and no value");
    }

    TensorLoader& loader_;
    std::vector<const Graph*> outer_;
};

// ---- validation before conversion --------------------------------------------------------------

void checkOpsetsKnown(const onnx::ModelProto& mp) {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& op : mp.opset_import()) {
        std::string d = op.domain().empty() ? "ai.onnx" : op.domain();
        if (op.domain() == ir::kNhwcDomain) {  // PassLens's own channels-last domain
            if (op.version() < 1 || op.version() > ir::kNhwcDomainVersion)
                throwBadInput("model imports opset " + std::to_string(op.version()) + " of domain '" + d +
                              "'; this build knows version " + std::to_string(ir::kNhwcDomainVersion));
            continue;
        }
        auto it = ranges.find(op.domain() == "ai.onnx" ? "" : op.domain());
        if (it == ranges.end()) continue;  // a custom domain: kept, interpreted only where supported
        if (op.version() > it->second.second)
            throwBadInput("model imports opset " + std::to_string(op.version()) + " of domain '" + d +
                          "', newer than the " + std::to_string(it->second.second) +
                          " this build knows");
        if (op.version() < 1) throwBadInput("model imports invalid opset version " + std::to_string(op.version()) + " of domain '" + d + "'");
    }
}

void checkOpsKnown(const onnx::GraphProto& gp, const std::unordered_map<std::string, int64_t>& opsets,
                   const std::unordered_set<std::string>& functions, const std::string& where) {
    const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
    for (const auto& np : gp.node()) {
        std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
        std::string label = np.name().empty() ? np.op_type() : np.name();
        if (functions.count(domain + ":" + np.op_type())) continue;
        auto op = opsets.find(domain);
        if (op == opsets.end())
            throwBadInput(where + "node '" + label + "' uses domain '" + np.domain() + "', which the model does not import");
        if (domain == ir::kNhwcDomain && !ir::isNhwcOp(np.op_type()))
            throwBadInput(where + "node '" + label + "': unknown operator '" + np.op_type() + "' in domain '" +
                          domain + "' (it holds the channels-last variants of Conv, MaxPool, Resize, ...)");
        if (ranges.count(domain) && !onnx::OpSchemaRegistry::Schema(np.op_type(), static_cast<int>(op->second), domain))
            throwBadInput(where + "node '" + label + "': unknown operator '" + np.op_type() + "' in domain '" +
                          (domain.empty() ? "ai.onnx" : domain) + "' at opset " + std::to_string(op->second));
        for (const auto& a : np.attribute()) {
            if (a.has_g()) checkOpsKnown(a.g(), opsets, functions, where + "subgraph of '" + label + "': ");
            for (const auto& sg : a.graphs()) checkOpsKnown(sg, opsets, functions, where + "subgraph of '" + label + "': ");
        }
    }
}

void checkShapesFit(const onnx::GraphProto& gp) {
    auto check = [](const onnx::ValueInfoProto& vi) {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
        std::vector<int64_t> dims;
        for (const auto& d : vi.type().tensor_type().shape().dim())
            if (d.has_dim_value()) dims.push_back(d.dim_value());
        checkedElementCount(dims, "value '" + vi.name() + "'");
    };
    for (const auto& v : gp.input()) check(v);
    for (const auto& v : gp.output()) check(v);
    for (const auto& v : gp.value_info()) check(v);
}

void runShapeInference(onnx::ModelProto& mp, Model& model) {
    try {
        onnx::ShapeInferenceOptions strict(false, 1, false);
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), strict);
        return;
    } catch (const std::exception& e) {
        std::string msg = e.what();
        for (char& c : msg)
            if (c == '\n') c = ' ';
        model.warnings.push_back("shape inference failed, shapes may be incomplete: " + msg);
    }
    try {
        onnx::ShapeInferenceOptions lenient(false, 0, false);
        onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), lenient);
    } catch (const std::exception& e) {
        model.warnings.push_back(std::string("shape inference gave up: ") + e.what());
    }
}

Function convertFunction(onnx::FunctionProto& fp, TensorLoader& loader) {
    Function f;
    f.name = fp.name();
    f.domain = fp.domain();
    f.docString = fp.doc_string();
    f.unknownFields = unknownFieldsOf(fp);
    f.attributeNames.assign(fp.attribute().begin(), fp.attribute().end());
    for (const auto& op : fp.opset_import()) f.opsetImports.push_back({op.domain(), op.version(), op.has_domain()});
    // Reuse the graph importer by dressing the body up as a GraphProto.
    onnx::GraphProto body;
    body.set_name(fp.name());
    for (const auto& in : fp.input()) body.add_input()->set_name(in);
    for (const auto& out : fp.output()) body.add_output()->set_name(out);
    body.mutable_node()->Swap(fp.mutable_node());
    GraphImporter importer(loader, {});
    f.body = importer.run(body);
    return f;
}

}  // namespace

// ---- entry points -------------------------------------------------------------------------------

static Model importParsed(onnx::ModelProto& mp, const std::string& baseDir, const std::string& sourcePath,
                          const ImportOptions& options) {
    if (!mp.has_graph()) throwBadInput("'" + sourcePath + "' is not an ONNX model: it has no graph");
    if (mp.ir_version() <= 0) throwBadInput("'" + sourcePath + "' is not an ONNX model: ir_version is missing");

    registerNewerOpsets();
    if (mp.ir_version() > kMaxIrVersion)
        throwBadInput("'" + sourcePath + "' has IR version " + std::to_string(mp.ir_version()) + ", newer than the " +
                      std::to_string(kMaxIrVersion) + " this build reads");
    Model m;
    m.sourcePath = sourcePath;
    if (options.validateOps) {
        checkOpsetsKnown(mp);
        std::unordered_map<std::string, int64_t> opsets;
        for (const auto& op : mp.opset_import()) opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
        if (mp.ir_version() < 3 && !opsets.count("")) opsets[""] = 1;  // IR v1/v2 had no opset_import
        std::unordered_set<std::string> functions;
        for (const auto& f : mp.functions()) functions.insert((f.domain() == "ai.onnx" ? "" : f.domain()) + ":" + f.name());
        checkOpsKnown(mp.graph(), opsets, functions, "");
        validateAgainstSchemas(mp, opsets);
    }
    checkShapesFit(mp.graph());
    if (!options.pinnedDims.empty()) {
        for (auto& in : *mp.mutable_graph()->mutable_input()) {
            if (!in.type().has_tensor_type()) continue;
            for (auto& d : *in.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
                for (const auto& [name, value] : options.pinnedDims)
                    if (d.has_dim_param() && d.dim_param() == name) d.set_dim_value(value);
        }
    }
    if (!options.validateOps) validateFunctionCalls(mp);  // validateAgainstSchemas covers it otherwise
    // Declared ranks that break an op's spec: invalid input, and libonnx's inference would crash on some.
    if (options.validateOps || options.inferShapes)
        if (auto hazard = findRankHazard(mp.graph())) throwBadInput(*hazard);
    if (options.inferShapes) {
        runShapeInference(mp, m);
        checkShapesFit(mp.graph());  // inferred shapes too: an Expand to 2^93 elements is caught here
    }

    m.irVersion = mp.ir_version();
    m.producerName = mp.producer_name();
    m.producerVersion = mp.producer_version();
    m.domain = mp.domain();
    m.modelVersion = mp.model_version();
    m.docString = mp.doc_string();
    m.unknownFields = unknownFieldsOf(mp);
    for (const auto& op : mp.opset_import()) m.opsetImports.push_back({op.domain(), op.version(), op.has_domain()});
    for (const auto& kv : mp.metadata_props()) m.metadataProps.push_back({kv.key(), kv.value()});
    for (const auto& ti : mp.training_info()) m.trainingInfo.push_back(ti.SerializeAsString());

    TensorLoader loader(baseDir);
    for (auto& fp : *mp.mutable_functions()) m.functions.push_back(convertFunction(fp, loader));
    GraphImporter importer(loader, {});
    m.graph = std::move(*importer.run(*mp.mutable_graph()));
    if (options.inferShapes)  // dims libonnx leaves unknown, from the symbolic engine (core/shape)
        for (auto& w : shape::refineShapesSymbolically(m)) m.warnings.push_back(std::move(w));

    if (options.verify) verifyOrThrow(m);
    if (options.validateOps) validateAttributeValues(m);
    return m;
}

bool isUnknownOpError(const std::string& message) {
    return message.find(": unknown operator '") != std::string::npos || message.find(" this build knows") != std::string::npos;
}

static void parseModelProto(onnx::ModelProto& mp, const void* data, size_t size, const std::string& label) {
    if (size == 0) throwBadInput("'" + label + "' is empty");
    google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(std::min<size_t>(size, INT_MAX)));
    stream.SetTotalBytesLimit(INT_MAX);
    if (size > INT_MAX) throwBadInput("'" + label + "' is larger than 2 GB; store its weights as external data");
    if (!mp.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
        throwBadInput("'" + label + "' is not a valid ONNX model (protobuf parse failed: truncated or not ONNX)");
}

Model importModelBytes(std::string_view bytes, const std::string& baseDir, const ImportOptions& options) {
    onnx::ModelProto mp;
    parseModelProto(mp, bytes.data(), bytes.size(), "<memory>");
    return importParsed(mp, baseDir, "<memory>", options);
}

Model importModelFile(const std::string& path, const ImportOptions& options) {
    auto file = MappedFile::open(path);
    onnx::ModelProto mp;
    parseModelProto(mp, file->data(), file->size(), path);
    std::string baseDir = std::filesystem::path(path).parent_path().string();
    return importParsed(mp, baseDir.empty() ? "." : baseDir, path, options);
}

void pinDims(Model& m, const std::vector<std::pair<std::string, int64_t>>& pins) {
    for (ValueId v : m.graph.inputs()) {
        auto& shape = m.graph.value(v).type.shape;
        if (!shape) continue;
        for (auto& d : shape->dims)
            for (const auto& [name, value] : pins)
                if (!d.isStatic() && d.param == name) {
                    d.value = value;
                    d.param.clear();
                }
    }
}

}  // namespace passlens::onnxio
