#include "analysis/FusionReasons.h"

#include <algorithm>
#include <map>

#include "analysis/OpRegistry.h"

namespace passlens::ui {

std::string shortNodeName(const std::string& name) {
    const size_t last = name.rfind('/');
    if (last == std::string::npos || name.size() <= 28) return name;
    const size_t before = last == 0 ? std::string::npos : name.rfind('/', last - 1);
    return before == std::string::npos || before == 0 ? name.substr(last + 1) : "…" + name.substr(before);
}

std::string shortenNames(std::string text, const analysis::FusionConsideration& c) {
    auto shorten = [&](const std::string& name) {
        if (name.empty()) return;
        const std::string s = shortNodeName(name);
        if (s == name) return;
        for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + s.size()))
            text.replace(at, name.size(), s);
    };
    // Longest first: a name may be the prefix of another ("/Add" of "/Add_1_output_0").
    std::vector<std::string> names = c.nodeNames;
    names.push_back(c.blockingNodeName);
    names.push_back(c.blockingValueName);
    std::sort(names.begin(), names.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    for (const auto& n : names) shorten(n);
    return text;
}

std::string ruleHeadline(const std::string& rule) {
    static const std::map<std::string, std::string> text = {
        {"opaque", "An Opaque op: fusion never crosses it."},
        {"constant", "A Constant is data, not a kernel: nothing to fuse."},
        {"no-postdom", "Its result goes more than one way (or is a graph output), so there is no single next op to fuse into."},
        {"reduce-is-terminal", "A reduction ends its group: what reads a reduced tensor starts a new kernel."},
        {"anchor-needs-elemwise-path",
         "A Conv/MatMul group may only absorb elementwise ops after it; the path continues through an op that moves or reshapes data."},
        {"sink-not-fusable", "The op it feeds (e.g. a Conv or MatMul) cannot take an elementwise op in front of it."},
        {"path-not-injective", "On the way to its next op there is an op that is more than a reshape/elementwise step."},
        {"one-anchor-per-group", "Two Conv/MatMul results meet here; a group holds only one of them."},
        {"max-depth", "The group would grow beyond the fusion depth limit."},
    };
    auto it = text.find(rule);
    return it == text.end() ? std::string() : it->second;
}

std::string opaqueReason(const std::string& op, const std::string& domain) {
    if (!domain.empty() && domain != "ai.onnx")
        return op + " is in the '" + domain + "' domain: the op-pattern table has rules for ai.onnx ops only, so it counts as Opaque.";
    static const std::map<std::string, std::string> text = {
        {"Shape", "reads only its input's shape (metadata), there is no data computation to fuse"},
        {"Size", "reads only its input's shape (metadata), there is no data computation to fuse"},
        {"ConstantOfShape", "makes a new tensor from a shape; it has no input data to fuse with"},
        {"Range", "makes a new tensor from scalars; it has no input data to fuse with"},
        {"Softmax", "needs the whole row (a max and a sum) before it writes any element"},
        {"LogSoftmax", "needs the whole row (a max and a sum) before it writes any element"},
        {"LayerNormalization", "needs a mean and variance over the row before it writes any element"},
        {"InstanceNormalization", "needs a mean and variance per channel before it writes any element"},
        {"GroupNormalization", "needs a mean and variance per group before it writes any element"},
        {"If", "is control flow: its bodies are separate graphs"},
        {"Loop", "is control flow: its bodies are separate graphs"},
        {"Scan", "is control flow: its bodies are separate graphs"},
        {"NonZero", "has an output size that depends on the data"},
        {"TopK", "sorts: its outputs depend on every input element"},
        {"LSTM", "is a recurrent layer with its own loop"},
        {"GRU", "is a recurrent layer with its own loop"},
    };
    auto it = text.find(op);
    const std::string why = it != text.end() ? it->second : "has no fusion rule in the table (only elementwise, broadcast, injective, reduction and Conv/MatMul-like ops have one)";
    return op + " is Opaque in the op-pattern table: it " + why + ".";
}

ir::ValueId unknownShapeBehind(const ir::Graph& g, const analysis::FusionConsideration& c, ir::NodeId node) {
    (void)node;
    // Only where a shape decides: a broadcast op (Add, Mul, ...) reads an input ElemWise-ly only
    // when the shapes are proven equal; with one unknown the edge stays Broadcast and an anchor's
    // group stops there. Other refusals (an Opaque op, a reduction) hold whatever the shapes are.
    if (c.applied || c.source != "fusion-groups" || c.blockingValue == ir::kNone || c.blockingNode == ir::kNone) return ir::kNone;
    if (c.rule != "anchor-needs-elemwise-path" && c.rule != "sink-not-fusable") return ir::kNone;
    if (!g.hasNode(c.blockingNode) || !g.hasValue(c.blockingValue)) return ir::kNone;
    const ir::Node& reader = g.node(c.blockingNode);
    if (analysis::patternOfOpType(reader.opType, reader.domain) != analysis::OpPattern::Broadcast ||
        analysis::edgePattern(g, c.blockingNode, c.blockingValue) != analysis::OpPattern::Broadcast)
        return ir::kNone;
    auto unknown = [&](ir::ValueId v) {
        if (v == ir::kNone || !g.hasValue(v)) return false;
        const auto& shape = g.value(v).type.shape;
        return !shape || !shape->isStatic();
    };
    if (unknown(c.blockingValue)) return c.blockingValue;
    for (ir::ValueId v : reader.outputs)
        if (unknown(v)) return v;
    for (ir::ValueId v : reader.inputs)
        if (unknown(v)) return v;
    return ir::kNone;
}

std::string sectionOf(const analysis::FusionConsideration& c) {
    if (c.source == "fusion-groups") return "Fusion groups (TVM FuseOps)";
    if (c.source.rfind("ort-", 0) == 0) return "onnxruntime transformers";
    return "Pattern rewrites (passes)";
}

}  // namespace passlens::ui
