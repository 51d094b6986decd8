#include "ir/IntsText.h"
#include "onnx/NewerOpsets.h"
#include "onnx/SchemaValidation.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

#include "ir/Error.h"
#include "ir/Model.h"

namespace passlens::onnxio {

namespace {

std::string normalDomain(const std::string& d) { return d == "ai.onnx" ? "" : d; }
std::string functionKey(const std::string& domain, const std::string& name) { return normalDomain(domain) + ":" + name; }

std::string count(int n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string nodeText(const onnx::NodeProto& np) {
    return "node '" + (np.name().empty() ? np.op_type() : np.name()) + "' (" + np.op_type() + ")";
}

std::string attrTypeName(onnx::AttributeProto::AttributeType t) {
    std::string s = onnx::AttributeProto::AttributeType_Name(t);
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// IR v1 files may leave AttributeProto.type unset; the importer infers it from the field that is set.
onnx::AttributeProto::AttributeType effectiveType(const onnx::AttributeProto& a) {
    if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
    if (a.has_f()) return onnx::AttributeProto::FLOAT;
    if (a.has_i()) return onnx::AttributeProto::INT;
    if (a.has_s()) return onnx::AttributeProto::STRING;
    if (a.has_t()) return onnx::AttributeProto::TENSOR;
    if (a.has_g()) return onnx::AttributeProto::GRAPH;
    if (a.floats_size()) return onnx::AttributeProto::FLOATS;
    if (a.ints_size()) return onnx::AttributeProto::INTS;
    if (a.strings_size()) return onnx::AttributeProto::STRINGS;
    return onnx::AttributeProto::UNDEFINED;
}

struct FunctionSignature {
    int inputs = 0, outputs = 0;
    size_t index = 0;
};

class SchemaValidator {
public:
    /// `checkSchemas = false`: only the model-local function calls (arity, recursion).
    SchemaValidator(const onnx::ModelProto& mp, const OpsetMap& opsets, bool checkSchemas)
        : mp_(mp), modelOpsets_(opsets), checkSchemas_(checkSchemas) {
        for (size_t i = 0; i < static_cast<size_t>(mp.functions_size()); ++i) {
            const auto& f = mp.functions(static_cast<int>(i));
            // (domain, name) names one function (ONNX IR); with two definitions, which one a call
            // reaches depends on the reader (libonnx takes the first), so a cycle through either
            // could hide from the recursion check.
            auto [it, added] = functions_.try_emplace(functionKey(f.domain(), f.name()), FunctionSignature{f.input_size(), f.output_size(), i});
            if (!added)
                throwBadInput("model-local function '" + f.name() + "' (domain '" + f.domain() + "') is defined twice (functions " +
                              std::to_string(it->second.index + 1) + " and " + std::to_string(i + 1) + " of " +
                              std::to_string(mp.functions_size()) + "); a function's domain and name must be unique");
        }
        calls_.resize(static_cast<size_t>(mp.functions_size()));
    }

    void run() {
        checkGraph(mp_.graph(), modelOpsets_, "", kNoFunction);
        for (int i = 0; i < mp_.functions_size(); ++i) {
            const auto& f = mp_.functions(i);
            OpsetMap opsets = modelOpsets_;
            for (const auto& op : f.opset_import()) opsets[normalDomain(op.domain())] = op.version();
            std::string where = "function '" + f.name() + "': ";
            for (const auto& np : f.node()) checkNode(np, opsets, where, static_cast<size_t>(i));
        }
        checkNoRecursion();
    }

private:
    static constexpr size_t kNoFunction = SIZE_MAX;

    void checkGraph(const onnx::GraphProto& gp, const OpsetMap& opsets, const std::string& where, size_t inFunction) {
        for (const auto& np : gp.node()) checkNode(np, opsets, where, inFunction);
    }

    void checkNode(const onnx::NodeProto& np, const OpsetMap& opsets, const std::string& where, size_t inFunction) {
        // Subgraphs first: their nesting depth is bounded by protobuf's recursion limit.
        for (const auto& a : np.attribute()) {
            std::string inner = where + "subgraph of " + nodeText(np) + ": ";
            if (a.has_g()) checkGraph(a.g(), opsets, inner, inFunction);
            for (const auto& g : a.graphs()) checkGraph(g, opsets, inner, inFunction);
        }
        const std::string domain = normalDomain(np.domain());
        if (auto f = functions_.find(functionKey(domain, np.op_type())); f != functions_.end()) {
            checkCall(np, f->second, where);
            if (inFunction != kNoFunction) calls_[inFunction].push_back(f->second.index);
            return;
        }
        if (!checkSchemas_) return;
        auto version = opsets.find(domain);
        if (version == opsets.end()) return;  // checkOpsKnown reports domains the model does not import
        const auto* schema = onnx::OpSchemaRegistry::Schema(np.op_type(), static_cast<int>(version->second), domain);
        if (!schema) return;  // custom domain, or an op checkOpsKnown already reported
        checkCounts(np, *schema, where);
        checkAttributes(np, *schema, where);
    }

    static void checkCall(const onnx::NodeProto& np, const FunctionSignature& f, const std::string& where) {
        // Fewer inputs or outputs than declared is allowed (trailing optional ones), more is not.
        if (np.input_size() > f.inputs)
            throwBadInput(where + nodeText(np) + ": " + count(np.input_size(), "input") + ", the model-local function takes " +
                          std::to_string(f.inputs));
        if (np.output_size() > f.outputs)
            throwBadInput(where + nodeText(np) + ": " + count(np.output_size(), "output") + ", the model-local function has " +
                          std::to_string(f.outputs));
    }

    static std::string bounds(int lo, int hi) {
        if (hi == std::numeric_limits<int>::max()) return "at least " + std::to_string(lo);
        if (lo == hi) return std::to_string(lo);
        return std::to_string(lo) + " to " + std::to_string(hi);
    }

    static void checkCounts(const onnx::NodeProto& np, const onnx::OpSchema& schema, const std::string& where) {
        if (np.input_size() < schema.min_input() || np.input_size() > schema.max_input())
            throwBadInput(where + nodeText(np) + ": " + count(np.input_size(), "input") + ", the schema takes " +
                          bounds(schema.min_input(), schema.max_input()));
        if (np.output_size() < schema.min_output() || np.output_size() > schema.max_output())
            throwBadInput(where + nodeText(np) + ": " + count(np.output_size(), "output") + ", the schema takes " +
                          bounds(schema.min_output(), schema.max_output()));
        // A required (single, non-optional) input may not be the empty name of an omitted one.
        const auto& formal = schema.inputs();
        for (int i = 0; i < np.input_size() && !formal.empty(); ++i) {
            const auto& p = formal[std::min<size_t>(static_cast<size_t>(i), formal.size() - 1)];
            if (np.input(i).empty() && p.GetOption() == onnx::OpSchema::Single)
                throwBadInput(where + nodeText(np) + ": required input " + std::to_string(i) + " ('" + p.GetName() + "') is missing");
        }
    }

    static void checkAttributes(const onnx::NodeProto& np, const onnx::OpSchema& schema, const std::string& where) {
        for (const auto& a : np.attribute()) {
            auto it = schema.attributes().find(a.name());
            if (it == schema.attributes().end()) continue;  // unknown attributes are kept (exporters add some)
            auto want = it->second.type;
            auto got = effectiveType(a);
            if (want != onnx::AttributeProto::UNDEFINED && got != onnx::AttributeProto::UNDEFINED && want != got)
                throwBadInput(where + nodeText(np) + ": attribute '" + a.name() + "' is " + attrTypeName(got) +
                              ", the schema declares " + attrTypeName(want));
        }
        for (const auto& entry : schema.attributes()) {
            const std::string& name = entry.first;  // a plain reference: clang 14 cannot capture bindings
            if (!entry.second.required) continue;
            bool present = std::any_of(np.attribute().begin(), np.attribute().end(), [&](const auto& a) { return a.name() == name; });
            if (!present) throwBadInput(where + nodeText(np) + ": required attribute '" + name + "' is missing");
        }
    }

    // Iterative DFS over the function call graph (a chain of functions may be long).
    void checkNoRecursion() const {
        enum : uint8_t { New, OnStack, Done };
        std::vector<uint8_t> state(calls_.size(), New);
        std::vector<std::pair<size_t, size_t>> stack;  // (function, next callee position)
        for (size_t root = 0; root < calls_.size(); ++root) {
            if (state[root] != New) continue;
            stack.push_back({root, 0});
            state[root] = OnStack;
            while (!stack.empty()) {
                auto& [f, next] = stack.back();
                if (next == calls_[f].size()) {
                    state[f] = Done;
                    stack.pop_back();
                    continue;
                }
                size_t callee = calls_[f][next++];
                if (state[callee] == OnStack) throwRecursion(stack, callee);
                if (state[callee] == New) {
                    state[callee] = OnStack;
                    stack.push_back({callee, 0});
                }
            }
        }
    }

    [[noreturn]] void throwRecursion(const std::vector<std::pair<size_t, size_t>>& stack, size_t callee) const {
        auto name = [&](size_t i) { return "'" + mp_.functions(static_cast<int>(i)).name() + "'"; };
        if (stack.back().first == callee) throwBadInput("model-local function " + name(callee) + " calls itself");
        std::string path;
        bool onCycle = false;
        for (const auto& [f, next] : stack) {
            onCycle = onCycle || f == callee;
            if (onCycle) path += name(f) + " -> ";
        }
        throwBadInput("model-local functions call each other recursively: " + path + name(callee));
    }

    const onnx::ModelProto& mp_;
    const OpsetMap& modelOpsets_;
    const bool checkSchemas_;
    std::unordered_map<std::string, FunctionSignature> functions_;
    std::vector<std::vector<size_t>> calls_;  ///< per function: the functions its body calls
};

// ---- attribute values against ranks --------------------------------------------------------------

std::optional<int64_t> rankOf(const ir::Graph& g, const ir::Node& n, size_t slot) {
    if (slot >= n.inputs.size() || n.inputs[slot] == ir::kNone) return std::nullopt;
    const auto& type = g.value(n.inputs[slot]).type;
    if (!type.isTensor() || !type.shape) return std::nullopt;
    return static_cast<int64_t>(type.shape->dims.size());
}

[[noreturn]] void throwNode(const ir::Node& n, const std::string& what) {
    throwBadInput("node '" + n.displayName() + "' (" + n.opType + "): " + what);
}

/// `axis` must lie in [lo, hi].
void checkAxis(const ir::Node& n, const std::string& attr, int64_t axis, int64_t lo, int64_t hi, int64_t rank) {
    if (axis < lo || axis > hi)
        throwNode(n, attr + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank) + " (valid: " +
                         std::to_string(lo) + ".." + std::to_string(hi) + ")");
}

void checkAxis(const ir::Node& n, const std::string& attr, int64_t axis, int64_t rank) { checkAxis(n, attr, axis, -rank, rank - 1, rank); }

void checkPermutation(const ir::Node& n, std::optional<int64_t> rank) {
    const auto* perm = n.attr("perm");
    if (!perm || perm->kind != ir::AttrKind::Ints) return;
    const auto& p = perm->ints;
    std::vector<bool> seen(p.size(), false);
    for (int64_t x : p) {
        if (x < 0 || x >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(x)])
            throwNode(n, "perm " + ir::intsText(p) + " is not a permutation of 0.." + std::to_string(static_cast<int64_t>(p.size()) - 1));
        seen[static_cast<size_t>(x)] = true;
    }
    if (rank && !p.empty() && static_cast<int64_t>(p.size()) != *rank)
        throwNode(n, "perm " + ir::intsText(p) + " has " + std::to_string(p.size()) + " entries for an input of rank " + std::to_string(*rank));
}

// Ops whose integer attribute names an axis of input 0; `extra` widens the range (Flatten's axis
// may be r, OneHot's indexes the output, of rank r + 1).
struct AxisAttr {
    const char* op;
    const char* attr;
    int extra;
};
constexpr AxisAttr kAxisAttrs[] = {
    {"Concat", "axis", 0},         {"Softmax", "axis", 0},      {"LogSoftmax", "axis", 0}, {"Hardmax", "axis", 0},
    {"Gather", "axis", 0},         {"GatherElements", "axis", 0}, {"Split", "axis", 0},    {"ArgMax", "axis", 0},
    {"ArgMin", "axis", 0},         {"LayerNormalization", "axis", 0}, {"Flatten", "axis", 1}, {"Compress", "axis", 0},
    {"ScatterElements", "axis", 0}, {"TopK", "axis", 0},         {"OneHot", "axis", 1},
};

bool isReduce(const std::string& op) { return op.rfind("Reduce", 0) == 0; }

/// The axes of a Reduce / Squeeze / Unsqueeze: the attribute (older opsets) or a constant int64
/// input 1 (Unsqueeze and Squeeze from opset 13, Reduce ops from 18); nullopt when not constant.
std::optional<std::vector<int64_t>> axesOf(const ir::Graph& g, const ir::Node& n) {
    if (const auto* a = n.attr("axes"); a && a->kind == ir::AttrKind::Ints) return a->ints;
    if (n.inputs.size() < 2 || n.inputs[1] == ir::kNone) return std::nullopt;
    const ir::TensorPtr& t = g.value(n.inputs[1]).initializer;
    if (!t || t->dtype != ir::DataType::Int64 || t->data.size() != static_cast<size_t>(t->elementCount()) * 8) return std::nullopt;
    return std::vector<int64_t>(t->as<int64_t>(), t->as<int64_t>() + t->elementCount());
}

void checkNodeValues(const ir::Graph& g, const ir::Node& n) {
    if (!n.domain.empty() && n.domain != "ai.onnx") return;
    auto rank = rankOf(g, n, 0);
    if (n.opType == "Transpose") return checkPermutation(n, rank);
    if (!rank) return;
    for (const auto& a : kAxisAttrs) {
        if (n.opType != a.op) continue;
        const auto* attr = n.attr(a.attr);
        if (!attr || attr->kind != ir::AttrKind::Int) continue;
        if (a.extra == 0) checkAxis(n, a.attr, attr->i, *rank);
        else if (n.opType == "Flatten") checkAxis(n, a.attr, attr->i, -*rank, *rank, *rank);
        else checkAxis(n, a.attr, attr->i, -*rank - 1, *rank, *rank);
    }
    if (!isReduce(n.opType) && n.opType != "Squeeze" && n.opType != "Unsqueeze") return;
    auto axes = axesOf(g, n);
    if (!axes) return;
    // Unsqueeze's axes index its output, of rank r + |axes|.
    const int64_t axesRank = n.opType == "Unsqueeze" ? *rank + static_cast<int64_t>(axes->size()) : *rank;
    std::vector<bool> seen(static_cast<size_t>(axesRank), false);
    for (int64_t axis : *axes) {
        checkAxis(n, "axes", axis, axesRank);
        auto s = seen[static_cast<size_t>(axis < 0 ? axis + axesRank : axis)];
        if (s) throwNode(n, "axes " + ir::intsText(*axes) + " name axis " + std::to_string(axis) + " twice");
        s = true;
    }
}

// The smallest input and output counts any opset of a default-domain op requires.
struct Envelope {
    int minInputs = std::numeric_limits<int>::max(), minOutputs = std::numeric_limits<int>::max();
};

const std::unordered_map<std::string, Envelope>& envelopes() {
    static const auto table = [] {
        std::unordered_map<std::string, Envelope> t;
        for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas_with_history()) {
            if (!s.domain().empty()) continue;
            auto& e = t[s.Name()];
            e.minInputs = std::min(e.minInputs, s.min_input());
            e.minOutputs = std::min(e.minOutputs, s.min_output());
        }
        return t;
    }();
    return table;
}

}  // namespace

bool fitsSchemaEnvelope(const ir::Node& n) {
    if (!n.domain.empty() && n.domain != "ai.onnx") return true;
    auto it = envelopes().find(n.opType);
    if (it == envelopes().end()) return true;
    const Envelope& e = it->second;
    const int ins = static_cast<int>(n.inputs.size()), outs = static_cast<int>(n.outputs.size());
    // Only the minimums: a matcher reads what every opset requires; newer opsets than this libonnx
    // knows may add inputs (ReduceMean's axes in opset 18), which the matchers check themselves.
    if (ins < e.minInputs || outs < e.minOutputs) return false;
    for (int i = 0; i < e.minInputs; ++i)
        if (n.inputs[static_cast<size_t>(i)] == ir::kNone) return false;
    return e.minOutputs == 0 || n.outputs[0] != ir::kNone;
}

void validateAgainstSchemas(const onnx::ModelProto& mp, const OpsetMap& opsets) {
    registerNewerOpsets();
    SchemaValidator(mp, opsets, true).run();
}

void validateFunctionCalls(const onnx::ModelProto& mp) { SchemaValidator(mp, {}, false).run(); }

void validateAttributeValues(const ir::Model& m) {
    auto check = [](const ir::Graph& g) {
        for (ir::NodeId id : g.nodeOrder()) checkNodeValues(g, g.node(id));
    };
    m.graph.forEachGraph(check);
    for (const auto& f : m.functions)
        if (f.body) f.body->forEachGraph(check);
}

}  // namespace passlens::onnxio
