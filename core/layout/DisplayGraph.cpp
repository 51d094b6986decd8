#include "layout/DisplayGraph.h"

#include "onnx/Schemas.h"

#include <cctype>

#include <algorithm>
#include <array>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace passlens::layout {

using namespace passlens::ir;

// ---- categories ---------------------------------------------------------------------------------

namespace {

constexpr std::array<CategoryStyle, 13> kStyles = {{
    {"Graph input", "#e8f1fb", "#5b8fd1"},
    {"Graph output", "#eaf6ea", "#56a35a"},
    {"Constant", "#f3f3f3", "#9a9a9a"},
    {"Convolution", "#dce9fb", "#3d7bd9"},
    {"MatMul / Gemm", "#e3ddfa", "#6f57d0"},
    {"Normalization", "#d7f0ef", "#2a9d97"},
    {"Activation", "#fde6cf", "#e07b1f"},
    {"Elementwise", "#fbf3c7", "#c9a400"},
    {"Reduction", "#f9dbe3", "#d0506f"},
    {"Pooling", "#e1f2d5", "#5e9e34"},
    {"Shape / layout", "#ececec", "#8a8f98"},
    {"Control flow", "#f5def5", "#a24aa6"},
    {"Other", "#ffffff", "#6b7280"},
}};

bool in(std::string_view op, std::initializer_list<std::string_view> set) {
    return std::find(set.begin(), set.end(), op) != set.end();
}

}  // namespace

OpCategory categorize(std::string_view op, std::string_view domain) {
    if (op == "Constant") return OpCategory::Constant;
    if (in(op, {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv", "DeformConv", "FusedConv"}))
        return OpCategory::Convolution;
    if (in(op, {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul", "FusedMatMul", "Einsum", "Attention"}))
        return OpCategory::MatMul;
    if (in(op, {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "GroupNormalization",
                "LpNormalization", "MeanVarianceNormalization", "SimplifiedLayerNormalization", "RMSNormalization"}))
        return OpCategory::Normalization;
    if (in(op, {"Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Gelu", "Erf",
                "Elu", "Selu", "Celu", "Softplus", "Softsign", "Softmax", "LogSoftmax", "Mish", "Clip",
                "ThresholdedRelu", "FastGelu", "BiasGelu", "QuickGelu"}))
        return OpCategory::Activation;
    if (in(op, {"Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Max", "Min",
                "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Not",
                "Xor", "Where", "Cast", "Floor", "Ceil", "Round", "Sin", "Cos", "Sign", "Mod", "BitShift", "IsNaN",
                "IsInf", "CastLike", "Identity"}))
        return OpCategory::Elementwise;
    if (op.rfind("Reduce", 0) == 0 || in(op, {"ArgMax", "ArgMin", "TopK", "CumSum"})) return OpCategory::Reduction;
    if (op.find("Pool") != std::string_view::npos || op == "Resize" || op == "Upsample") return OpCategory::Pooling;
    if (in(op, {"Reshape", "Transpose", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice", "Gather",
                "GatherElements", "GatherND", "Shape", "Size", "Expand", "Tile", "Pad", "ConstantOfShape", "Range",
                "ScatterND", "ScatterElements", "DepthToSpace", "SpaceToDepth", "NonZero", "OneHot"}))
        return OpCategory::Shape;
    if (in(op, {"If", "Loop", "Scan", "SequenceMap"})) return OpCategory::ControlFlow;
    (void)domain;
    return OpCategory::Other;
}

const CategoryStyle& styleOf(OpCategory c) { return kStyles[static_cast<size_t>(c)]; }

std::span<const OpCategory> allCategories() {
    static constexpr std::array<OpCategory, 13> order = {
        OpCategory::Input, OpCategory::Output, OpCategory::Constant, OpCategory::Convolution, OpCategory::MatMul,
        OpCategory::Normalization, OpCategory::Activation, OpCategory::Elementwise, OpCategory::Reduction,
        OpCategory::Pooling, OpCategory::Shape, OpCategory::ControlFlow, OpCategory::Other};
    return order;
}

// ---- text ---------------------------------------------------------------------------------------

namespace {

/// A dim_param short enough for an edge label: names and short expressions as they are
/// ("batch", "2*seq", "floor(height/4)"); a long expression (the shape engine's Swin window
/// arithmetic runs to kilobytes) as f(the input dims it depends on), e.g. "f(height)". The full
/// text stays in the value's type (Properties, tooltips, `passlens-cli shapes`).
/// A dim name an exporter or shape inference made up, not one the model's author chose
/// ("unk__9", "Gather1928_dim_0"): it says nothing to a reader.
bool isGeneratedDimName(const std::string& param) {
    if (param.rfind("unk__", 0) == 0) return true;
    const size_t dim = param.rfind("_dim_");
    return dim != std::string::npos && dim > 0 && dim + 5 < param.size() &&
           std::all_of(param.begin() + long(dim + 5), param.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::string shortDimParam(const std::string& param) {
    if (isGeneratedDimName(param)) return "?";  // the raw name stays in the value's type (tooltips, Properties)
    constexpr size_t kLongest = 20;
    if (param.size() <= kLongest) return param;
    std::vector<std::string> names;
    for (size_t i = 0; i < param.size();) {
        const unsigned char c = static_cast<unsigned char>(param[i]);
        if (!std::isalpha(c) && c != '_') { ++i; continue; }
        size_t j = i;
        while (j < param.size() && (std::isalnum(static_cast<unsigned char>(param[j])) || param[j] == '_' || param[j] == '.')) ++j;
        std::string word = param.substr(i, j - i);
        const bool function = j < param.size() && param[j] == '(';
        if (!function && std::find(names.begin(), names.end(), word) == names.end()) names.push_back(word);
        i = j;
    }
    std::string s = "f(";
    for (size_t i = 0; i < names.size(); ++i) s += (i ? "," : "") + names[i];
    s += ")";
    return s.size() <= 2 * kLongest ? s : "f(…)";
}

}  // namespace

std::string shapeText(const TypeInfo& t) {
    if (!t.isTensor() || !t.shape) return {};
    if (t.shape->dims.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < t.shape->dims.size(); ++i) {
        if (i) s += "×";
        const Dim& d = t.shape->dims[i];
        s += d.value ? std::to_string(*d.value) : (d.param.empty() ? "?" : shortDimParam(d.param));
    }
    return s;
}

std::string edgeLabel(const TypeInfo& t) {
    if (!t.isTensor()) return t.known() ? t.toString() : std::string();
    std::string shape = shapeText(t);
    std::string type(dataTypeName(t.elemType));
    return shape.empty() ? type : shape + " " + type;
}

namespace {

std::string tensorDims(const Tensor& t) {
    if (t.dims.empty()) return "scalar";
    std::string s;
    for (size_t i = 0; i < t.dims.size(); ++i) s += (i ? "×" : "") + std::to_string(t.dims[i]);
    return s;
}

std::string inputSlotName(const Node& n, size_t slot, int64_t opset) {
    if (!n.domain.empty() && n.domain != "ai.onnx") return {};
    return onnxio::schemaInputName(n.opType, opset, slot);
}

/// An Identity that only renames a weight (torch.onnx writes one per shared parameter): drawn as
/// what it is, a constant, rather than a row of boxes with long edges into the model.
bool weightAlias(const Graph& g, const Node& n) {
    if (n.opType != "Identity" || !n.domain.empty() || n.inputs.size() != 1 || n.inputs[0] == kNone) return false;
    const Value& in = g.value(n.inputs[0]);
    return in.initializer && !in.isGraphOutput;
}

/// A Constant node or a weight alias: a value fixed before the model runs.
bool constantLike(const Graph& g, const Node& n) {
    return (n.opType == "Constant" && n.domain.empty() && n.inputs.empty()) || weightAlias(g, n);
}

/// A constant-like node that can be drawn inside its consumers: read by someone, not a graph output.
bool foldableConstantNode(const Graph& g, const Node& n) {
    if (!constantLike(g, n) || n.outputs.size() != 1) return false;
    if (n.outputs[0] == kNone) return false;
    const Value& v = g.value(n.outputs[0]);
    return !v.isGraphOutput && !v.consumers.empty();
}

/// A Constant (or weight alias) nobody reads: a pass that removed its readers leaves it for DCE.
/// Drawn, a step would show dozens of them popping up in a row (Swin's shape-chain folding
/// frees ~100), so it is not drawn at all.
bool unreadConstantNode(const Graph& g, const Node& n) {
    if (!constantLike(g, n) || n.outputs.empty()) return false;
    for (ValueId v : n.outputs)
        if (v != kNone && (g.value(v).isGraphOutput || !g.value(v).consumers.empty())) return false;
    return true;
}

std::string constantNodeDims(const Graph& g, const Node& n) {
    if (n.opType == "Identity") return tensorDims(*g.value(n.inputs[0]).initializer);
    if (const Attribute* a = n.attr("value"); a && a->t) return tensorDims(*a->t);
    return {};
}

/// A box that shows constant value `v` (an initializer, or a Constant node's output): its name
/// and dims. The caller sets the key.
DisplayNode constantValueBox(const Graph& g, ValueId v) {
    const Value& val = g.value(v);
    std::string dims;
    if (val.initializer) dims = tensorDims(*val.initializer);
    else if (val.producer != kNone) dims = constantNodeDims(g, g.node(val.producer));
    DisplayNode dn;
    dn.kind = DisplayNode::Kind::Constant;
    dn.value = v;
    dn.title = val.name;
    dn.subtitle = "⟨" + (dims.empty() ? std::string("?") : dims) + "⟩";
    dn.category = OpCategory::Constant;
    return dn;
}

/// Unfolded mode: a constant box with several outgoing edges keeps its first reader (in node
/// order); every other reader gets its own copy of the box, listed just before that reader. The
/// copies show the same value, so selecting one resolves to what the shared box resolved to.
void copySharedConstants(const Graph& g, DisplayGraph& dg) {
    std::unordered_map<uint32_t, size_t> outDegree;
    for (const auto& e : dg.edges) ++outDegree[e.from];
    std::unordered_map<uint32_t, const DisplayNode*> byKey;
    for (const auto& n : dg.nodes) byKey[n.key] = &n;
    auto isSharedConstant = [&](uint32_t key) {
        if (outDegree[key] < 2) return false;
        const DisplayNode& n = *byKey.at(key);
        if (n.kind == DisplayNode::Kind::Constant) return !g.value(n.value).isGraphOutput;
        return n.kind == DisplayNode::Kind::Op && g.node(n.node).inputs.empty() && foldableConstantNode(g, g.node(n.node));
    };
    ValueId maxValue = 0;
    for (ValueId v : g.valueIds()) maxValue = std::max(maxValue, v);

    std::unordered_map<uint32_t, std::vector<DisplayNode>> copiesBefore;  // reader key → its copies
    std::unordered_set<uint32_t> firstReaderKept;
    uint32_t nextKey = kFirstCopyKey;
    for (auto& e : dg.edges) {
        if (!isSharedConstant(e.from) || firstReaderKept.insert(e.from).second) continue;
        if ((nextKey & ~kKeyTagMask) <= maxValue) break;  // copy keys would meet value keys
        DisplayNode copy = constantValueBox(g, e.value);
        copy.key = nextKey--;
        copy.copyOf = e.from;
        e.from = copy.key;
        copiesBefore[e.to].push_back(std::move(copy));
        ++dg.constantCopies;
    }
    if (copiesBefore.empty()) return;
    std::vector<DisplayNode> nodes;
    nodes.reserve(dg.nodes.size() + dg.constantCopies);
    for (auto& n : dg.nodes) {
        if (auto it = copiesBefore.find(n.key); it != copiesBefore.end())
            for (auto& c : it->second) nodes.push_back(std::move(c));
        nodes.push_back(std::move(n));
    }
    dg.nodes = std::move(nodes);
}

}  // namespace

DisplayGraph buildDisplayGraph(const Graph& g, const DisplayOptions& opt) {
    DisplayGraph dg;
    std::unordered_map<ValueId, uint32_t> producerKey;  // value → box that draws its producer
    std::unordered_set<NodeId> folded;

    auto isFoldableInit = [&](const Value& v) { return opt.foldConstants && v.initializer && !v.isGraphOutput; };

    // Graph inputs (initializers listed as inputs count as constants).
    for (ValueId v : g.inputs()) {
        const Value& val = g.value(v);
        if (val.initializer) continue;
        DisplayNode dn;
        dn.key = kInputKeyTag | v;
        dn.kind = DisplayNode::Kind::Input;
        dn.value = v;
        dn.title = val.name;
        dn.subtitle = edgeLabel(val.type);
        dn.category = OpCategory::Input;
        producerKey[v] = dn.key;
        dg.nodes.push_back(std::move(dn));
    }
    // Outer-scope captures of a subgraph are inputs from where the body stands.
    for (ValueId v : g.valueIds()) {
        const Value& val = g.value(v);
        if (!val.isOuterScope || val.consumers.empty()) continue;
        DisplayNode dn;
        dn.key = kInputKeyTag | v;
        dn.kind = DisplayNode::Kind::Input;
        dn.value = v;
        dn.title = val.name;
        // The capture's type is its definition's (ir::copyCaptureTypes), when inference knew it.
        const std::string type = edgeLabel(val.type);
        dn.subtitle = type.empty() ? "outer scope" : "outer scope · " + type;
        dn.category = OpCategory::Input;
        producerKey[v] = dn.key;
        dg.nodes.push_back(std::move(dn));
    }
    // Unfolded initializers get their own boxes.
    if (!opt.foldConstants) {
        for (ValueId v : g.initializerOrder()) {
            const Value& val = g.value(v);
            if (val.consumers.empty() && !val.isGraphOutput) continue;
            DisplayNode dn = constantValueBox(g, v);
            dn.key = kConstantKeyTag | v;
            producerKey[v] = dn.key;
            dg.nodes.push_back(std::move(dn));
        }
    }
    for (NodeId id : g.nodeOrder()) {
        const Node& n = g.node(id);
        if (opt.foldConstants && (foldableConstantNode(g, n) || unreadConstantNode(g, n))) {
            folded.insert(id);
            ++dg.foldedConstantNodes;
            continue;
        }
        DisplayNode dn;
        dn.key = id;
        dn.kind = DisplayNode::Kind::Op;
        dn.node = id;
        dn.title = n.domain.empty() || n.domain == "ai.onnx" ? n.opType : n.domain + "." + n.opType;
        dn.subtitle = n.name;
        dn.category = categorize(n.opType, n.domain);
        dn.hasSubgraphs = n.hasSubgraphs();
        for (size_t slot = 0; slot < n.inputs.size(); ++slot) {
            ValueId v = n.inputs[slot];
            if (v == kNone) continue;
            const Value& val = g.value(v);
            std::string dims;
            if (isFoldableInit(val)) dims = tensorDims(*val.initializer);
            else if (val.producer != kNone && opt.foldConstants && foldableConstantNode(g, g.node(val.producer)))
                dims = constantNodeDims(g, g.node(val.producer));
            else continue;
            std::string slotName = inputSlotName(n, slot, opt.opset);
            dn.foldedLines.push_back((slotName.empty() ? val.name : slotName) + " ⟨" + dims + "⟩");
        }
        for (ValueId v : n.outputs)
            if (v != kNone) producerKey[v] = id;
        dg.nodes.push_back(std::move(dn));
        ++dg.opBoxCount;
    }
    for (ValueId v : g.outputs()) {
        const Value& val = g.value(v);
        DisplayNode dn;
        dn.key = kOutputKeyTag | v;
        dn.kind = DisplayNode::Kind::Output;
        dn.value = v;
        dn.title = val.name;
        dn.subtitle = edgeLabel(val.type);
        dn.category = OpCategory::Output;
        dg.nodes.push_back(std::move(dn));
    }

    // Edges: one per (value, consuming box). Subgraph captures also draw an edge into the If/Loop.
    std::set<std::pair<ValueId, uint32_t>> seen;
    auto addEdge = [&](ValueId v, uint32_t toKey) {
        auto it = producerKey.find(v);
        if (it == producerKey.end()) return;  // folded constant or unknown
        if (!seen.insert({v, toKey}).second) return;
        dg.edges.push_back({it->second, toKey, v, edgeLabel(g.value(v).type)});
    };
    for (NodeId id : g.nodeOrder()) {
        if (folded.count(id)) continue;
        for (ValueId v : g.readsOf(id))
            if (v != kNone) addEdge(v, id);
    }
    for (ValueId v : g.outputs()) addEdge(v, kOutputKeyTag | v);
    if (!opt.foldConstants && opt.copySharedConstants) copySharedConstants(g, dg);
    return dg;
}

ValueId DisplayGraph::valueOfKey(uint32_t key) const {
    for (const auto& n : nodes)
        if (n.key == key) return n.kind == DisplayNode::Kind::Op ? kNone : n.value;
    return kNone;
}

std::pair<double, double> estimateBoxSize(const DisplayNode& n) {
    // DejaVu Sans at 10 pt averages ~6 pt per character; titles are bold and a bit wider.
    size_t chars = n.title.size() + 2;
    chars = std::max(chars, n.subtitle.size() * 9 / 10);
    for (const auto& l : n.foldedLines) chars = std::max(chars, l.size() * 9 / 10);
    double w = std::clamp(chars * 6.2 + 16.0, 70.0, 320.0);
    size_t lines = 1 + (n.subtitle.empty() ? 0 : 1) + n.foldedLines.size();
    double h = 10.0 + lines * 13.0;
    return {w, h};
}

LayoutRequest toLayoutRequest(const DisplayGraph& dg, const BoxSizer& sizer, bool styled, LayoutOptions options) {
    LayoutRequest req;
    req.options = options;
    req.boxes.reserve(dg.nodes.size());
    for (const auto& n : dg.nodes) {
        auto [w, h] = sizer ? sizer(n) : estimateBoxSize(n);
        BoxRequest b{n.key, w, h, {}, {}, {}};
        if (styled) {
            b.label = n.title;
            if (!n.subtitle.empty()) b.label += "\n" + n.subtitle;
            for (const auto& l : n.foldedLines) b.label += "\n" + l;
            b.fillColor = styleOf(n.category).fill;
            b.borderColor = styleOf(n.category).border;
        }
        req.boxes.push_back(std::move(b));
    }
    // With constant boxes drawn, data edges weigh more than constant edges: otherwise each reader
    // sits halfway between its data input and the constant box beside it, and a chain of such
    // readers drifts sideways one step per constant (a staircase many times wider than the graph).
    const bool constantBoxes = std::any_of(dg.nodes.begin(), dg.nodes.end(),
                                           [](const DisplayNode& n) { return n.kind == DisplayNode::Kind::Constant; });
    std::unordered_map<uint32_t, bool> fromConstant;
    if (constantBoxes) {
        for (const auto& n : dg.nodes) fromConstant[n.key] = n.kind == DisplayNode::Kind::Constant;
        // Weighted edges need a few more network-simplex rounds to straighten the chain.
        if (req.options.nslimit && *req.options.nslimit < kConstantBoxesNslimit)
            req.options.nslimit = kConstantBoxesNslimit;
    }
    req.edges.reserve(dg.edges.size());
    for (const auto& e : dg.edges) {
        const int weight = constantBoxes && !fromConstant[e.from] ? kDataEdgeWeight : 1;
        req.edges.push_back({e.from, e.to, styled ? e.label : std::string(), weight});
    }
    return req;
}

}  // namespace passlens::layout
