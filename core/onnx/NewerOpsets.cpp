#include "onnx/NewerOpsets.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

// Op versions of ai.onnx opsets 18–23, from onnx/onnx docs/Changelog.md. Most are the previous
// version with more element types or one more attribute; those are rebuilt from libonnx's own
// schema (same inputs, outputs, type constraints, inference) with the changes applied. Ops that
// are new or whose inputs changed get their own signature and shape function here.

namespace passlens::onnxio {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

const OpSchema& libonnxSchema(const std::string& op, int version) {
    const OpSchema* s = onnx::OpSchemaRegistry::Schema(op, version, "");
    if (!s) throw std::logic_error("libonnx has no schema for " + op + "-" + std::to_string(version));
    return *s;
}

// ---- schema edits -------------------------------------------------------------------------------

struct InputSpec {
    std::string name, typeStr;
    OpSchema::FormalParameterOption option = OpSchema::Single;
};

/// A fresh schema with the signature of `base` (libonnx's newest version at or below
/// `baseVersion`), renumbered to `since`, after `edit` changed its parts.
struct SchemaParts {
    std::string name;
    std::vector<OpSchema::FormalParameter> inputs, outputs;
    std::map<std::string, OpSchema::Attribute> attributes;
    std::vector<OpSchema::TypeConstraintParam> constraints;
    onnx::InferenceFunction inference;
    onnx::DataPropagationFunction propagation;

    void addAttr(const std::string& attrName, AttributeProto::AttributeType type, std::optional<AttributeProto> def,
                 bool required = false) {
        removeAttr(attrName);
        if (def) attributes.emplace(attrName, OpSchema::Attribute(attrName, "", *def));
        else attributes.emplace(attrName, OpSchema::Attribute(attrName, "", type, required));
    }
    void addIntAttr(const std::string& attrName, int64_t def) {
        AttributeProto a;
        a.set_name(attrName);
        a.set_type(AttributeProto::INT);
        a.set_i(def);
        addAttr(attrName, AttributeProto::INT, a);
    }
    void addStringAttr(const std::string& attrName, const std::string& def) {
        AttributeProto a;
        a.set_name(attrName);
        a.set_type(AttributeProto::STRING);
        a.set_s(def);
        addAttr(attrName, AttributeProto::STRING, a);
    }
    void removeAttr(const std::string& attrName) { attributes.erase(attrName); }
    void addInput(const std::string& inputName, const std::string& typeStr,
                  OpSchema::FormalParameterOption option = OpSchema::Optional) {
        inputs.emplace_back(inputName, "", typeStr, option);
    }
    void addTypes(const std::string& param, std::initializer_list<const char*> types) {
        for (auto& c : constraints)
            if (c.type_param_str == param)
                for (const char* t : types)
                    if (std::find(c.allowed_type_strs.begin(), c.allowed_type_strs.end(), t) == c.allowed_type_strs.end())
                        c.allowed_type_strs.push_back(t);
    }
    void addConstraint(const std::string& param, std::vector<std::string> types) {
        constraints.emplace_back(param, std::move(types), "");
    }
};

SchemaParts partsOf(const OpSchema& s) {
    SchemaParts p;
    p.name = s.Name();
    for (const auto& in : s.inputs())
        p.inputs.emplace_back(in.GetName(), in.GetDescription(), in.GetTypeStr(), in.GetOption(), in.GetIsHomogeneous(),
                              in.GetMinArity(), in.GetDifferentiationCategory());
    for (const auto& out : s.outputs())
        p.outputs.emplace_back(out.GetName(), out.GetDescription(), out.GetTypeStr(), out.GetOption(),
                               out.GetIsHomogeneous(), out.GetMinArity(), out.GetDifferentiationCategory());
    for (const auto& [name, a] : s.attributes()) p.attributes.emplace(name, a);
    for (const auto& c : s.typeConstraintParams()) p.constraints.push_back(c);
    p.inference = s.GetTypeAndShapeInferenceFunction();
    p.propagation = s.GetDataPropagationFunction();
    return p;
}

std::vector<std::string>& registeredNames() {
    static std::vector<std::string> names;
    return names;
}

void registerParts(SchemaParts p, int since) {
    OpSchema s(p.name, __FILE__, __LINE__);
    s.SetName(p.name).SetDomain("").SinceVersion(since);
    for (size_t i = 0; i < p.inputs.size(); ++i) {
        const auto& in = p.inputs[i];
        s.Input(static_cast<int>(i), in.GetName(), in.GetDescription(), in.GetTypeStr(), in.GetOption(),
                in.GetIsHomogeneous(), in.GetMinArity(), in.GetDifferentiationCategory());
    }
    for (size_t i = 0; i < p.outputs.size(); ++i) {
        const auto& out = p.outputs[i];
        s.Output(static_cast<int>(i), out.GetName(), out.GetDescription(), out.GetTypeStr(), out.GetOption(),
                 out.GetIsHomogeneous(), out.GetMinArity(), out.GetDifferentiationCategory());
    }
    for (auto& [name, a] : p.attributes) s.Attr(a);
    for (auto& c : p.constraints) s.TypeConstraint(c.type_param_str, c.allowed_type_strs, c.description);
    if (p.inference) s.TypeAndShapeInferenceFunction(p.inference);
    if (p.propagation) s.PartialDataPropagationFunction(p.propagation);
    onnx::OpSchemaRegistry::OpSchemaRegisterOnce once(s);
    registeredNames().push_back(p.name + "-" + std::to_string(since));
}

/// The op at `since` with libonnx's newest signature, after `edit`.
void derive(const std::string& op, int since, const std::function<void(SchemaParts&)>& edit = {}) {
    SchemaParts p = partsOf(libonnxSchema(op, static_cast<int>(kLibonnxMaxOpset)));
    if (edit) edit(p);
    registerParts(std::move(p), since);
}

/// The op at `since`, derived from the version this table registered earlier (for a chain of
/// versions that each add something: Pad 18 → 19 → 21 → 23).
void rederive(const std::string& op, int from, int since, const std::function<void(SchemaParts&)>& edit = {}) {
    SchemaParts p = partsOf(libonnxSchema(op, from));
    if (edit) edit(p);
    registerParts(std::move(p), since);
}

SchemaParts fresh(const std::string& name) {
    SchemaParts p;
    p.name = name;
    return p;
}

const std::vector<std::string> kFloatTensors = {"tensor(float16)", "tensor(float)", "tensor(double)", "tensor(bfloat16)"};
const std::vector<std::string> kIntTensors = {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)",
                                              "tensor(int8)",  "tensor(int16)",  "tensor(int32)",  "tensor(int64)"};

// ---- shape helpers ------------------------------------------------------------------------------

std::optional<std::vector<int64_t>> constInts(InferenceContext& ctx, size_t input) {
    if (input >= ctx.getNumInputs()) return std::nullopt;
    const onnx::TensorProto* t = ctx.getInputData(input);
    if (!t) return std::nullopt;
    if (t->data_type() == onnx::TensorProto::INT64) return onnx::ParseData<int64_t>(t);
    if (t->data_type() == onnx::TensorProto::INT32) {
        auto v = onnx::ParseData<int32_t>(t);
        return std::vector<int64_t>(v.begin(), v.end());
    }
    return std::nullopt;
}

/// Dim arithmetic on values a file may set to anything: overflow is an inference error, not UB.
int64_t addDims(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) fail_shape_inference("dimension arithmetic overflows int64");
    return r;
}

int64_t mulDims(int64_t a, int64_t b) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) fail_shape_inference("dimension arithmetic overflows int64");
    return r;
}

bool inputPresent(InferenceContext& ctx, size_t i) { return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr; }

int64_t normalizedAxis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank) fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
    return axis < 0 ? axis + rank : axis;
}

/// Output 0 has input 0's rank with every dim unknown except those `keep` says to copy.
void sameRankUnknownDims(InferenceContext& ctx, const std::function<bool(int64_t)>& keep) {
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    auto* out = onnx::getOutputShape(ctx, 0);
    out->clear_dim();
    for (int i = 0; i < in.dim_size(); ++i) {
        auto* d = out->add_dim();
        if (keep(i)) *d = in.dim(i);
    }
}

// ---- shape functions of the new ops -------------------------------------------------------------

void splitWithNumOutputs(InferenceContext& ctx) {
    for (size_t i = 0; i < ctx.getNumOutputs(); ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    const int64_t rank = in.dim_size();
    const int64_t axis = normalizedAxis(onnx::getAttribute(ctx, "axis", 0), rank);
    const auto* numOutputs = ctx.getAttribute("num_outputs");
    const bool hasSplit = inputPresent(ctx, 1);
    if (numOutputs && hasSplit) fail_shape_inference("Split: give either the 'split' input or 'num_outputs', not both");
    const int64_t n = static_cast<int64_t>(ctx.getNumOutputs());
    if (n == 0) return;
    if (numOutputs && numOutputs->i() != n)
        fail_shape_inference("Split: num_outputs is ", numOutputs->i(), " but the node has ", n, " outputs");
    std::vector<std::optional<int64_t>> sizes(static_cast<size_t>(n));
    if (hasSplit) {
        auto split = constInts(ctx, 1);
        if (split) {
            if (static_cast<int64_t>(split->size()) != n) fail_shape_inference("Split: 'split' has ", split->size(), " entries for ", n, " outputs");
            for (int64_t i = 0; i < n; ++i) sizes[i] = (*split)[i];
        }
    } else if (in.dim(static_cast<int>(axis)).has_dim_value()) {
        const int64_t len = in.dim(static_cast<int>(axis)).dim_value();
        const int64_t chunk = len / n + (len % n != 0);  // the last chunk may be smaller (opset 18)
        for (int64_t i = 0; i < n; ++i) sizes[i] = std::max<int64_t>(0, std::min(chunk, addDims(len, -mulDims(i, chunk))));
    }
    for (int64_t i = 0; i < n; ++i) {
        auto* out = onnx::getOutputShape(ctx, static_cast<size_t>(i));
        out->CopyFrom(in);
        auto* d = out->mutable_dim(static_cast<int>(axis));
        d->Clear();
        if (sizes[i]) d->set_dim_value(*sizes[i]);
    }
}

/// Pad 18+: pads (and the optional axes) say how much each listed axis grows.
void padWithAxes(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    const int64_t rank = in.dim_size();
    auto pads = constInts(ctx, 1);
    std::vector<int64_t> axes;
    if (inputPresent(ctx, 3)) {
        auto a = constInts(ctx, 3);
        if (!a) return sameRankUnknownDims(ctx, [](int64_t) { return false; });
        for (int64_t x : *a) axes.push_back(normalizedAxis(x, rank));
    } else {
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    if (!pads) {
        return sameRankUnknownDims(ctx, [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) == axes.end(); });
    }
    const int64_t n = static_cast<int64_t>(axes.size());
    if (static_cast<int64_t>(pads->size()) != 2 * n)
        fail_shape_inference("Pad: 'pads' has ", pads->size(), " entries, expected ", 2 * n);
    auto* out = onnx::getOutputShape(ctx, 0);
    out->CopyFrom(in);
    for (int64_t k = 0; k < n; ++k) {
        auto* d = out->mutable_dim(static_cast<int>(axes[k]));
        if (d->has_dim_value()) d->set_dim_value(addDims(addDims(d->dim_value(), (*pads)[k]), (*pads)[k + n]));
        else d->Clear();
    }
}

/// Resize 18+: with `axes` or a keep_aspect_ratio_policy other than stretch, sizes/scales speak of
/// the listed axes only; otherwise the opset-13 rule applies.
onnx::InferenceFunction resizeWithAxes(onnx::InferenceFunction opset13) {
    return [opset13](InferenceContext& ctx) {
        const auto* axesAttr = ctx.getAttribute("axes");
        const auto* policy = ctx.getAttribute("keep_aspect_ratio_policy");
        const bool plain = (!axesAttr || axesAttr->ints_size() == 0) && (!policy || policy->s() == "stretch");
        if (plain) return opset13(ctx);
        onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
        if (!onnx::hasInputShape(ctx, 0)) return;
        const int64_t rank = onnx::getInputShape(ctx, 0).dim_size();
        std::vector<int64_t> axes;
        if (axesAttr)
            for (int64_t a : axesAttr->ints()) axes.push_back(normalizedAxis(a, rank));
        if (axes.empty())
            for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
        sameRankUnknownDims(ctx, [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) == axes.end(); });
        auto sizes = constInts(ctx, 3);
        const bool stretch = !policy || policy->s() == "stretch";
        if (sizes && stretch && sizes->size() == axes.size()) {
            auto* out = onnx::getOutputShape(ctx, 0);
            for (size_t k = 0; k < axes.size(); ++k) out->mutable_dim(static_cast<int>(axes[k]))->set_dim_value((*sizes)[k]);
        }
    };
}

void centerCropPad(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const int64_t rank = onnx::getInputShape(ctx, 0).dim_size();
    std::vector<int64_t> axes;
    if (const auto* a = ctx.getAttribute("axes"))
        for (int64_t x : a->ints()) axes.push_back(normalizedAxis(x, rank));
    if (axes.empty())
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    sameRankUnknownDims(ctx, [&](int64_t i) { return std::find(axes.begin(), axes.end(), i) == axes.end(); });
    if (auto shape = constInts(ctx, 1)) {
        if (shape->size() != axes.size())
            fail_shape_inference("CenterCropPad: 'shape' has ", shape->size(), " entries for ", axes.size(), " axes");
        auto* out = onnx::getOutputShape(ctx, 0);
        for (size_t k = 0; k < axes.size(); ++k) out->mutable_dim(static_cast<int>(axes[k]))->set_dim_value((*shape)[k]);
    }
}

void col2Im(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    auto image = constInts(ctx, 1);
    auto block = constInts(ctx, 2);
    if (!image) return;
    auto* out = onnx::getOutputShape(ctx, 0);
    out->clear_dim();
    auto* n = out->add_dim();
    auto* c = out->add_dim();
    if (onnx::hasInputShape(ctx, 0)) {
        const auto& in = onnx::getInputShape(ctx, 0);
        if (in.dim_size() != 3) fail_shape_inference("Col2Im: input must be [N, C*prod(block_shape), L]");
        *n = in.dim(0);
        if (block && in.dim(1).has_dim_value()) {
            int64_t prod = 1;
            for (int64_t b : *block) prod = mulDims(prod, b);
            if (prod > 0 && in.dim(1).dim_value() % prod == 0) c->set_dim_value(in.dim(1).dim_value() / prod);
        }
    }
    for (int64_t s : *image) out->add_dim()->set_dim_value(s);
}

void deformConv(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    auto* out = onnx::getOutputShape(ctx, 0);
    if (!onnx::hasInputShape(ctx, 2)) return;
    const auto& offset = onnx::getInputShape(ctx, 2);
    out->clear_dim();
    auto* n = out->add_dim();
    if (onnx::hasInputShape(ctx, 0) && onnx::getInputShape(ctx, 0).dim_size() > 0) *n = onnx::getInputShape(ctx, 0).dim(0);
    auto* m = out->add_dim();
    if (onnx::hasInputShape(ctx, 1) && onnx::getInputShape(ctx, 1).dim_size() > 0) *m = onnx::getInputShape(ctx, 1).dim(0);
    for (int i = 2; i < offset.dim_size(); ++i) *out->add_dim() = offset.dim(i);
}

void affineGrid(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    auto size = constInts(ctx, 1);
    if (!size) return;
    if (size->size() != 4 && size->size() != 5) fail_shape_inference("AffineGrid: 'size' must be (N, C, H, W) or (N, C, D, H, W)");
    auto* out = onnx::getOutputShape(ctx, 0);
    out->clear_dim();
    out->add_dim()->set_dim_value((*size)[0]);
    for (size_t i = 2; i < size->size(); ++i) out->add_dim()->set_dim_value((*size)[i]);
    out->add_dim()->set_dim_value(static_cast<int64_t>(size->size()) - 2);
}

void gridSample(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 1)) return;
    const auto& grid = onnx::getInputShape(ctx, 1);
    auto* out = onnx::getOutputShape(ctx, 0);
    out->clear_dim();
    auto* n = out->add_dim();
    auto* c = out->add_dim();
    if (onnx::hasInputShape(ctx, 0)) {
        const auto& x = onnx::getInputShape(ctx, 0);
        if (x.dim_size() >= 2) { *n = x.dim(0); *c = x.dim(1); }
    }
    for (int i = 1; i + 1 < grid.dim_size(); ++i) *out->add_dim() = grid.dim(i);
}

void dft(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    const int64_t rank = in.dim_size();
    if (rank < 2) fail_shape_inference("DFT: the input needs a batch axis and a last axis of 1 or 2 (real/complex)");
    std::optional<int64_t> axis = -2;
    if (inputPresent(ctx, 2)) {
        auto a = constInts(ctx, 2);
        axis = a && a->size() == 1 ? std::optional<int64_t>((*a)[0]) : std::nullopt;
    }
    const bool onesided = onnx::getAttribute(ctx, "onesided", 0) != 0;
    const bool changesLength = onesided || inputPresent(ctx, 1);
    std::optional<int64_t> ax = axis ? std::optional<int64_t>(normalizedAxis(*axis, rank)) : std::nullopt;
    sameRankUnknownDims(ctx, [&](int64_t i) { return i != rank - 1 && (!changesLength || (ax && i != *ax)); });
    onnx::getOutputShape(ctx, 0)->mutable_dim(static_cast<int>(rank - 1))->set_dim_value(2);
}

void attention(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (ctx.getNumOutputs() > 1) onnx::propagateElemTypeFromInputToOutput(ctx, 1, 1);
    if (ctx.getNumOutputs() > 2) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 2);
    if (ctx.getNumOutputs() > 3) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 3);
    if (!onnx::hasNInputShapes(ctx, 3)) return;
    const auto& q = onnx::getInputShape(ctx, 0);
    const auto& k = onnx::getInputShape(ctx, 1);
    const auto& v = onnx::getInputShape(ctx, 2);
    const int qRank = q.dim_size();
    if (qRank != 3 && qRank != 4) fail_shape_inference("Attention: Q must be 3-D or 4-D");
    if (k.dim_size() != qRank || v.dim_size() != qRank) fail_shape_inference("Attention: Q, K and V must have the same rank");
    auto* y = onnx::getOutputShape(ctx, 0);
    y->CopyFrom(q);
    if (qRank == 4) {
        *y->mutable_dim(3) = v.dim(3);
    } else {
        const int64_t qHeads = onnx::getAttribute(ctx, "q_num_heads", 0), kvHeads = onnx::getAttribute(ctx, "kv_num_heads", 0);
        if (qHeads <= 0 || kvHeads <= 0) fail_shape_inference("Attention: 3-D inputs need q_num_heads and kv_num_heads");
        auto* d = y->mutable_dim(2);
        d->Clear();
        if (v.dim(2).has_dim_value()) d->set_dim_value(mulDims(v.dim(2).dim_value() / kvHeads, qHeads));
    }
}

void rotaryOrNorm(InferenceContext& ctx) { onnx::propagateShapeAndTypeFromFirstInput(ctx); }

void imageDecoder(InferenceContext& ctx) {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
    auto* out = onnx::getOutputShape(ctx, 0);
    out->clear_dim();
    for (int i = 0; i < 3; ++i) out->add_dim();
}

void stringSplit(InferenceContext& ctx) {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::STRING);
    onnx::updateOutputElemType(ctx, 1, onnx::TensorProto::INT64);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    auto* y = onnx::getOutputShape(ctx, 0);
    y->CopyFrom(in);
    y->add_dim();
    onnx::getOutputShape(ctx, 1)->CopyFrom(in);
}

void boolSameShape(InferenceContext& ctx) {
    onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void broadcastBinary(InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (onnx::hasNInputShapes(ctx, 2))
        onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
                                                   *onnx::getOutputShape(ctx, 0));
}

/// DequantizeLinear 19+: the output takes the scale's element type (float, float16, bfloat16).
onnx::InferenceFunction outputTypeOfInput1(onnx::InferenceFunction base) {
    return [base](InferenceContext& ctx) {
        base(ctx);
        if (ctx.getInputType(1)) onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    };
}

/// QuantizeLinear 21+: output_dtype, else the zero point's type, else uint8.
void quantizeLinear21(InferenceContext& ctx) {
    const int64_t dtype = onnx::getAttribute(ctx, "output_dtype", 0);
    if (dtype != 0) onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype));
    else if (inputPresent(ctx, 2)) onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
    else onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::UINT8);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// ---- the table ----------------------------------------------------------------------------------

void registerOpset18() {
    // Reduce* take `axes` as an input, as ReduceSum has since 13 (whose shape function reads it).
    const auto reduceWithAxesInput = libonnxSchema("ReduceSum", 13).GetTypeAndShapeInferenceFunction();
    for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                           "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
        derive(op, 18, [&](SchemaParts& p) {
            p.removeAttr("axes");
            p.addIntAttr("noop_with_empty_axes", 0);
            p.addInput("axes", "tensor(int64)");
            p.inference = reduceWithAxesInput;
        });
    }
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
        auto p = fresh(op);
        p.addInput("A", "T", OpSchema::Single);
        p.addInput("B", "T", OpSchema::Single);
        p.outputs.emplace_back("C", "", "T");
        p.addConstraint("T", kIntTensors);
        p.inference = broadcastBinary;
        registerParts(std::move(p), 18);
    }
    {
        auto p = fresh("BitwiseNot");
        p.addInput("X", "T", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T");
        p.addConstraint("T", kIntTensors);
        p.inference = onnx::propagateShapeAndTypeFromFirstInput;
        registerParts(std::move(p), 18);
    }
    {
        auto p = fresh("CenterCropPad");
        p.addInput("input_data", "T", OpSchema::Single);
        p.addInput("shape", "Tind", OpSchema::Single);
        p.outputs.emplace_back("output_data", "", "T");
        p.addAttr("axes", AttributeProto::INTS, std::nullopt);
        p.addConstraint("T", {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(int8)",
                              "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(bfloat16)", "tensor(float16)",
                              "tensor(float)", "tensor(double)", "tensor(string)", "tensor(bool)", "tensor(complex64)",
                              "tensor(complex128)"});
        p.addConstraint("Tind", {"tensor(int32)", "tensor(int64)"});
        p.inference = centerCropPad;
        registerParts(std::move(p), 18);
    }
    {
        auto p = fresh("Col2Im");
        p.addInput("input", "T", OpSchema::Single);
        p.addInput("image_shape", "tensor(int64)", OpSchema::Single);
        p.addInput("block_shape", "tensor(int64)", OpSchema::Single);
        p.outputs.emplace_back("output", "", "T");
        for (const char* a : {"dilations", "pads", "strides"}) p.addAttr(a, AttributeProto::INTS, std::nullopt);
        p.addConstraint("T", {"tensor(uint8)", "tensor(uint16)", "tensor(uint32)", "tensor(uint64)", "tensor(int8)",
                              "tensor(int16)", "tensor(int32)", "tensor(int64)", "tensor(bfloat16)", "tensor(float16)",
                              "tensor(float)", "tensor(double)", "tensor(string)", "tensor(bool)", "tensor(complex64)",
                              "tensor(complex128)"});
        p.inference = col2Im;
        registerParts(std::move(p), 18);
    }
    {
        auto p = fresh("GroupNormalization");
        p.addInput("X", "T", OpSchema::Single);
        p.addInput("scale", "T", OpSchema::Single);
        p.addInput("bias", "T", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T");
        AttributeProto eps;
        eps.set_name("epsilon");
        eps.set_type(AttributeProto::FLOAT);
        eps.set_f(1e-5f);
        p.addAttr("epsilon", AttributeProto::FLOAT, eps);
        p.addAttr("num_groups", AttributeProto::INT, std::nullopt, true);
        p.addConstraint("T", kFloatTensors);
        p.inference = onnx::propagateShapeAndTypeFromFirstInput;
        registerParts(std::move(p), 18);
    }
    // LpPool gains ceil_mode and dilations: MaxPool's pooling arithmetic has both.
    derive("LpPool", 18, [](SchemaParts& p) {
        p.addIntAttr("ceil_mode", 0);
        p.addAttr("dilations", AttributeProto::INTS, std::nullopt);
        p.inference = libonnxSchema("MaxPool", 12).GetTypeAndShapeInferenceFunction();
    });
    {
        auto p = fresh("Mish");
        p.addInput("X", "T", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T");
        p.addConstraint("T", {"tensor(float16)", "tensor(float)", "tensor(double)"});
        p.inference = onnx::propagateShapeAndTypeFromFirstInput;
        registerParts(std::move(p), 18);
    }
    // Optional* accept a plain tensor too.
    derive("OptionalHasElement", 18, [](SchemaParts& p) {
        p.inputs[0] = OpSchema::FormalParameter(p.inputs[0].GetName(), "", p.inputs[0].GetTypeStr(), OpSchema::Optional);
        p.addTypes("O", {"tensor(float)", "tensor(int64)", "tensor(int32)", "tensor(bool)", "tensor(float16)", "tensor(double)"});
        p.inference = [](InferenceContext& ctx) {
            onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::BOOL);
            onnx::getOutputShape(ctx, 0)->clear_dim();
        };
    });
    derive("OptionalGetElement", 18, [](SchemaParts& p) {
        p.addTypes("O", {"tensor(float)", "tensor(int64)", "tensor(int32)", "tensor(bool)", "tensor(float16)", "tensor(double)"});
        p.inference = [](InferenceContext& ctx) {
            const auto* t = ctx.getInputType(0);
            if (!t) return;
            auto* out = ctx.getOutputType(0);
            if (t->has_optional_type()) out->CopyFrom(t->optional_type().elem_type());
            else out->CopyFrom(*t);
        };
    });
    derive("Pad", 18, [](SchemaParts& p) {
        p.addInput("axes", "Tind");
        p.addConstraint("Tind", {"tensor(int32)", "tensor(int64)"});
        p.inference = padWithAxes;
    });
    derive("Resize", 18, [](SchemaParts& p) {
        p.addIntAttr("antialias", 0);
        p.addAttr("axes", AttributeProto::INTS, std::nullopt);
        p.addStringAttr("keep_aspect_ratio_policy", "stretch");
        p.inference = resizeWithAxes(p.inference);
    });
    derive("ScatterElements", 18);  // reduction gains "max" and "min"
    derive("ScatterND", 18);
    derive("Split", 18, [](SchemaParts& p) {
        p.addAttr("num_outputs", AttributeProto::INT, std::nullopt);
        p.inference = splitWithNumOutputs;
    });
}

void registerOpset19() {
    derive("AveragePool", 19, [](SchemaParts& p) {
        p.addAttr("dilations", AttributeProto::INTS, std::nullopt);
        p.inference = libonnxSchema("MaxPool", 12).GetTypeAndShapeInferenceFunction();
    });
    for (const char* op : {"Cast", "CastLike"})
        derive(op, 19, [](SchemaParts& p) { p.addIntAttr("saturate", 1); });
    for (const char* op : {"Constant", "Identity", "If", "Loop", "Scan", "Shape", "Size", "Reshape"}) derive(op, 19);
    derive("Equal", 19, [](SchemaParts& p) { p.addTypes("T", {"tensor(string)"}); });
    {
        auto p = fresh("DeformConv");
        p.addInput("X", "T", OpSchema::Single);
        p.addInput("W", "T", OpSchema::Single);
        p.addInput("offset", "T", OpSchema::Single);
        p.addInput("B", "T");
        p.addInput("mask", "T");
        p.outputs.emplace_back("Y", "", "T");
        for (const char* a : {"dilations", "kernel_shape", "pads", "strides"}) p.addAttr(a, AttributeProto::INTS, std::nullopt);
        p.addIntAttr("group", 1);
        p.addIntAttr("offset_group", 1);
        p.addConstraint("T", kFloatTensors);
        p.inference = deformConv;
        registerParts(std::move(p), 19);
    }
    derive("DequantizeLinear", 19, [](SchemaParts& p) {
        p.addTypes("T", {"tensor(int32)"});
        p.inference = outputTypeOfInput1(p.inference);
    });
    derive("QuantizeLinear", 19, [](SchemaParts& p) { p.addIntAttr("saturate", 1); });
    rederive("Pad", 18, 19);             // mode "wrap"
    rederive("Resize", 18, 19);          // coordinate_transformation_mode "half_pixel_symmetric"
}

void registerOpset20() {
    {
        auto p = fresh("AffineGrid");
        p.addInput("theta", "T1", OpSchema::Single);
        p.addInput("size", "T2", OpSchema::Single);
        p.outputs.emplace_back("grid", "", "T1");
        p.addIntAttr("align_corners", 0);
        p.addConstraint("T1", kFloatTensors);
        p.addConstraint("T2", {"tensor(int64)"});
        p.inference = affineGrid;
        registerParts(std::move(p), 20);
    }
    derive("ConstantOfShape", 20);
    {
        auto p = fresh("DFT");
        p.addInput("input", "T1", OpSchema::Single);
        p.addInput("dft_length", "T2");
        p.addInput("axis", "tensor(int64)");
        p.outputs.emplace_back("output", "", "T1");
        p.addIntAttr("inverse", 0);
        p.addIntAttr("onesided", 0);
        p.addConstraint("T1", kFloatTensors);
        p.addConstraint("T2", {"tensor(int32)", "tensor(int64)"});
        p.inference = dft;
        registerParts(std::move(p), 20);
    }
    {
        auto p = fresh("Gelu");
        p.addInput("X", "T", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T");
        p.addStringAttr("approximate", "none");
        p.addConstraint("T", kFloatTensors);
        p.inference = onnx::propagateShapeAndTypeFromFirstInput;
        registerParts(std::move(p), 20);
    }
    derive("GridSample", 20, [](SchemaParts& p) { p.inference = gridSample; });  // N-d, modes linear/cubic
    {
        auto p = fresh("ImageDecoder");
        p.addInput("encoded_stream", "T1", OpSchema::Single);
        p.outputs.emplace_back("image", "", "T2");
        p.addStringAttr("pixel_format", "RGB");
        p.addConstraint("T1", {"tensor(uint8)"});
        p.addConstraint("T2", {"tensor(uint8)"});
        p.inference = imageDecoder;
        registerParts(std::move(p), 20);
    }
    for (const char* op : {"IsInf", "IsNaN"})
        derive(op, 20, [](SchemaParts& p) { p.addTypes("T1", {"tensor(bfloat16)"}); });
    for (const char* op : {"ReduceMax", "ReduceMin"})
        rederive(op, 18, 20, [](SchemaParts& p) { p.addTypes("T", {"tensor(bool)"}); });
    {
        auto p = fresh("RegexFullMatch");
        p.addInput("X", "T1", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T2");
        p.addAttr("pattern", AttributeProto::STRING, std::nullopt);
        p.addConstraint("T1", {"tensor(string)"});
        p.addConstraint("T2", {"tensor(bool)"});
        p.inference = boolSameShape;
        registerParts(std::move(p), 20);
    }
    {
        auto p = fresh("StringConcat");
        p.addInput("X", "T", OpSchema::Single);
        p.addInput("Y", "T", OpSchema::Single);
        p.outputs.emplace_back("Z", "", "T");
        p.addConstraint("T", {"tensor(string)"});
        p.inference = broadcastBinary;
        registerParts(std::move(p), 20);
    }
    {
        auto p = fresh("StringSplit");
        p.addInput("X", "T1", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "T2");
        p.outputs.emplace_back("Z", "", "T3");
        p.addAttr("delimiter", AttributeProto::STRING, std::nullopt);
        p.addAttr("maxsplit", AttributeProto::INT, std::nullopt);
        p.addConstraint("T1", {"tensor(string)"});
        p.addConstraint("T2", {"tensor(string)"});
        p.addConstraint("T3", {"tensor(int64)"});
        p.inference = stringSplit;
        registerParts(std::move(p), 20);
    }
}

/// Opset 21 adds int4/uint4 to the shape and movement ops (element types libonnx 1.12 cannot name,
/// so the signature is unchanged here), block quantization and GroupNormalization's stash_type.
void registerOpset21() {
    for (const char* op : {"Cast", "CastLike", "Constant", "Identity", "If", "Loop", "Reshape", "Scan", "Shape", "Size"})
        rederive(op, 19, 21);
    rederive("ConstantOfShape", 20, 21);
    rederive("Pad", 19, 21);
    for (const char* op : {"Flatten", "Squeeze", "Transpose", "Unsqueeze", "QLinearMatMul"}) derive(op, 21);
    rederive("DequantizeLinear", 19, 21, [](SchemaParts& p) { p.addIntAttr("block_size", 0); });
    rederive("QuantizeLinear", 19, 21, [](SchemaParts& p) {
        p.addIntAttr("block_size", 0);
        p.addIntAttr("output_dtype", 0);
        p.inference = quantizeLinear21;
    });
    rederive("GroupNormalization", 18, 21, [](SchemaParts& p) { p.addIntAttr("stash_type", 1); });
}

/// Opset 22 adds bfloat16 to the float ops; semantics are unchanged.
void registerOpset22() {
    for (const char* op : {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv", "ConvTranspose",
                           "Cos", "Cosh", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool",
                           "GlobalLpPool", "GlobalMaxPool", "HardSigmoid", "HardSwish", "InstanceNormalization",
                           "LSTM", "LpNormalization", "MaxPool", "MaxRoiPool", "MaxUnpool", "Multinomial",
                           "NegativeLogLikelihoodLoss", "RNN", "RandomNormal", "RandomNormalLike", "RandomUniform",
                           "RandomUniformLike", "RoiAlign", "Round", "Selu", "Sin", "Sinh", "Softplus", "Softsign",
                           "Tan", "ThresholdedRelu"})
        derive(op, 22, [op](SchemaParts& p) {
            // The float parameter is T, except for the random ops whose T1 is their float input.
            const std::string name = op;
            const bool t1IsFloat = name == "Bernoulli" || name == "Multinomial" || name == "RandomNormalLike" ||
                                   name == "RandomUniformLike" || name == "EyeLike";
            p.addTypes(t1IsFloat ? "T1" : "T", {"tensor(bfloat16)"});
        });
    rederive("AveragePool", 19, 22, [](SchemaParts& p) { p.addTypes("T", {"tensor(bfloat16)"}); });
    rederive("DeformConv", 19, 22);
    rederive("GridSample", 20, 22);
    rederive("LpPool", 18, 22, [](SchemaParts& p) { p.addTypes("T", {"tensor(bfloat16)"}); });
    rederive("Mish", 18, 22, [](SchemaParts& p) { p.addTypes("T", {"tensor(bfloat16)"}); });
}

/// Opset 23 adds float4e2m1 to the movement ops and three new transformer ops.
void registerOpset23() {
    for (const char* op : {"Cast", "CastLike", "Constant", "ConstantOfShape", "DequantizeLinear", "Flatten", "Identity",
                           "If", "Loop", "Pad", "QuantizeLinear", "Reshape", "Scan", "Shape", "Size", "Squeeze",
                           "Transpose", "Unsqueeze"})
        rederive(op, 21, 23);
    {
        auto p = fresh("Attention");
        p.addInput("Q", "T1", OpSchema::Single);
        p.addInput("K", "T1", OpSchema::Single);
        p.addInput("V", "T2", OpSchema::Single);
        p.addInput("attn_mask", "U");
        p.addInput("past_key", "T1");
        p.addInput("past_value", "T2");
        p.outputs.emplace_back("Y", "", "T1");
        p.outputs.emplace_back("present_key", "", "T1", OpSchema::Optional);
        p.outputs.emplace_back("present_value", "", "T2", OpSchema::Optional);
        p.outputs.emplace_back("qk_matmul_output", "", "T1", OpSchema::Optional);
        p.addIntAttr("is_causal", 0);
        p.addAttr("kv_num_heads", AttributeProto::INT, std::nullopt);
        p.addAttr("q_num_heads", AttributeProto::INT, std::nullopt);
        p.addIntAttr("qk_matmul_output_mode", 0);
        p.addAttr("scale", AttributeProto::FLOAT, std::nullopt);
        AttributeProto softcap;
        softcap.set_name("softcap");
        softcap.set_type(AttributeProto::FLOAT);
        softcap.set_f(0.0f);
        p.addAttr("softcap", AttributeProto::FLOAT, softcap);
        p.addIntAttr("softmax_precision", 0);
        p.addConstraint("T1", kFloatTensors);
        p.addConstraint("T2", kFloatTensors);
        std::vector<std::string> masks = kFloatTensors;
        masks.push_back("tensor(bool)");
        p.addConstraint("U", masks);
        p.inference = attention;
        registerParts(std::move(p), 23);
    }
    {
        auto p = fresh("RMSNormalization");
        p.addInput("X", "T", OpSchema::Single);
        p.addInput("scale", "V", OpSchema::Single);
        p.outputs.emplace_back("Y", "", "V");
        p.addIntAttr("axis", -1);
        AttributeProto eps;
        eps.set_name("epsilon");
        eps.set_type(AttributeProto::FLOAT);
        eps.set_f(1e-5f);
        p.addAttr("epsilon", AttributeProto::FLOAT, eps);
        p.addIntAttr("stash_type", 1);
        p.addConstraint("T", kFloatTensors);
        p.addConstraint("V", kFloatTensors);
        p.inference = [](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
            if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
        };
        registerParts(std::move(p), 23);
    }
    {
        auto p = fresh("RotaryEmbedding");
        p.addInput("X", "T", OpSchema::Single);
        p.addInput("cos_cache", "T", OpSchema::Single);
        p.addInput("sin_cache", "T", OpSchema::Single);
        p.addInput("position_ids", "M");
        p.outputs.emplace_back("Y", "", "T");
        p.addIntAttr("interleaved", 0);
        p.addIntAttr("num_heads", 0);
        p.addIntAttr("rotary_embedding_dim", 0);
        p.addConstraint("T", kFloatTensors);
        p.addConstraint("M", {"tensor(int64)"});
        p.inference = rotaryOrNorm;
        registerParts(std::move(p), 23);
    }
}

void registerAll() {
    // Raise libonnx's idea of the newest ai.onnx opset; its registry object is not const, only
    // the accessor is (it has no setter for the standard domains).
    auto& ranges = const_cast<std::unordered_map<std::string, std::pair<int, int>>&>(
        onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map());
    ranges[""] = {ranges[""].first, static_cast<int>(kMaxOnnxOpset)};
    // ai.onnx.ml 4 and 5 (LabelEncoder-4, TreeEnsemble-5): files optimized by ONNX Runtime import
    // them; ops of those versions without a schema here are still refused by name.
    if (ranges.count("ai.onnx.ml") && ranges["ai.onnx.ml"].second < 5) ranges["ai.onnx.ml"].second = 5;
    registerOpset18();
    registerOpset19();
    registerOpset20();
    registerOpset21();
    registerOpset22();
    registerOpset23();
}

}  // namespace

void registerNewerOpsets() {
    static std::once_flag once;
    std::call_once(once, registerAll);
}

std::vector<std::string> newerOpsetSchemaNames() {
    registerNewerOpsets();
    return registeredNames();
}

}  // namespace passlens::onnxio
