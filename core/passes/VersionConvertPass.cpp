// Opset conversion as a pass: libonnx's version converter upgrades a copy of the model, and the
// difference is applied node by node through the Rewriter, so the upgrade has a change log, the
// verifier, a stepper row and a diff like every other pass. Converted nodes are matched to the
// originals by the name of the value they produce (the converter keeps value names): a node whose
// op, attributes or inputs changed is replaced, a node the converter added is added, a node it
// dropped is erased.
#include <map>
#include <set>
#include <unordered_map>

#include "ir/Error.h"
#include "onnx/VersionConvert.h"
#include "passes/PassRegistry.h"
#include "passes/match/Equality.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

/// What the converter changed about one node, in words ("Upsample → Resize; attribute scales
/// removed; 2 → 3 inputs").
std::string describeChange(const Node& before, const Node& after, size_t inputsBefore, size_t inputsAfter) {
    std::vector<std::string> parts;
    if (before.opType != after.opType) parts.push_back(before.opType + " → " + after.opType);
    std::set<std::string> namesBefore, namesAfter;
    for (const auto& a : before.attributes) namesBefore.insert(a.name);
    for (const auto& a : after.attributes) namesAfter.insert(a.name);
    for (const auto& n : namesBefore)
        if (!namesAfter.count(n)) parts.push_back("attribute " + n + " removed");
    for (const auto& n : namesAfter)
        if (!namesBefore.count(n)) parts.push_back("attribute " + n + " added");
    for (const auto& a : before.attributes)
        if (const Attribute* b = after.attr(a.name); b && !sameAttributes({a}, {*b})) parts.push_back("attribute " + a.name + " changed");
    if (inputsBefore != inputsAfter)
        parts.push_back(std::to_string(inputsBefore) + " → " + std::to_string(inputsAfter) + " inputs");
    if (parts.empty()) parts.push_back("inputs rewired");
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
    return out;
}

class VersionConvertPass : public Pass {
public:
    std::string name() const override { return "version-convert"; }
    std::string description() const override {
        return "Upgrades the ai.onnx opset to --target-opset with the ONNX version converter, node by node";
    }
    std::vector<PassOption> options() const override {
        return {{"opset", PassOption::Type::Int, {}, "--target-opset (none: keep the model's)", "the ai.onnx opset to upgrade to",
                 [](PassOptions& o, const std::string& v) {
                     o.targetOpset = std::stoll(v);
                     if (o.targetOpset < 1) throwBadInput("version-convert{opset=...}: the opset must be 1 or more, got " + v);
                 }}};
    }

protected:
    void runImpl(PassContext& ctx) const override {
        const Model& model = ctx.model();
        const int64_t target = ctx.options().targetOpset;
        const int64_t current = model.opsetFor("");
        if (target <= 0 || target == current) return;
        const Model converted = onnxio::upgradeOpset(model, target);
        Rewriter& rw = ctx.rewriter();
        rw.setRule("opset-" + std::to_string(current) + "-to-" + std::to_string(target));
        const std::string why = "opset " + std::to_string(current) + " → " + std::to_string(target) + " (ONNX version converter)";
        applyGraph(rw, converted.graph, why);
        rw.setRule({});
        rw.setOpsetImport("", target, "the model now targets ai.onnx opset " + std::to_string(target));
        if (converted.irVersion > model.irVersion)
            rw.requireIrVersion(converted.irVersion, "opset " + std::to_string(target) + " needs IR version " +
                                                         std::to_string(converted.irVersion));
        for (const auto& w : converted.warnings)
            if (w.rfind("version converter: ", 0) == 0) rw.missed({}, w);
    }

private:
    /// Applies the converted main graph `conv` to the rewriter's graph.
    static void applyGraph(Rewriter& rw, const Graph& conv, const std::string& why) {
        const Graph& g = rw.graph();
        std::unordered_map<ValueId, ValueId> ours;  // conv value → value of g
        auto originalNamed = [&](const std::string& name) -> ValueId {
            auto v = g.findValue(name);
            return v ? *v : kNone;
        };
        // Initializers the converter kept keep their value; new or changed payloads get a fresh one.
        auto mapInput = [&](ValueId cv) -> ValueId {
            if (cv == kNone) return kNone;
            if (auto it = ours.find(cv); it != ours.end()) return it->second;
            const Value& c = conv.value(cv);
            ValueId mine = originalNamed(c.name);
            if (c.initializer) {
                if (mine == kNone || !g.value(mine).initializer || !g.value(mine).initializer->sameContents(*c.initializer))
                    mine = rw.newInitializer(c.name, c.initializer);
            } else if (mine == kNone) {
                throw Error(ErrorKind::Internal, "the version converter's graph reads '" + c.name + "' before defining it");
            }
            return ours[cv] = mine;
        };
        auto order = conv.topologicalOrder();
        if (!order) throwUnsupported("the version converter returned a graph with a cycle");
        std::set<NodeId> kept;     // original nodes the converted graph still has (changed or not)
        std::set<NodeId> written;  // nodes this pass added or put in place of an original
        for (NodeId cn : *order) {
            const Node& c = conv.node(cn);
            std::vector<ValueId> inputs;
            for (ValueId v : c.inputs) inputs.push_back(mapInput(v));
            // The original node: the producer of the value the converted node's first output is named after.
            NodeId original = kNone;
            for (ValueId v : c.outputs)
                if (v != kNone) {
                    ValueId mine = originalNamed(conv.value(v).name);
                    if (mine != kNone && g.value(mine).producer != kNone && !kept.count(g.value(mine).producer))
                        original = g.value(mine).producer;
                    break;
                }
            std::vector<ValueId> outputs;
            for (ValueId v : c.outputs) {
                if (v == kNone) { outputs.push_back(kNone); continue; }
                const Value& cv = conv.value(v);
                ValueId mine = originalNamed(cv.name);
                const bool ownedByOriginal = mine != kNone && original != kNone && g.value(mine).producer == original;
                if (!ownedByOriginal) mine = rw.newValue(cv.name, cv.type);
                outputs.push_back(ours[v] = mine);
            }
            if (original == kNone) {
                // Name what it feeds (a Clip's new min input, a Softmax's Flatten), so the entry says why.
                std::string feeds;
                for (ValueId v : c.outputs)
                    if (v != kNone)
                        for (NodeId r : conv.value(v).consumers)
                            if (feeds.find(conv.node(r).displayName()) == std::string::npos)
                                feeds += (feeds.empty() ? " for " : ", ") + conv.node(r).displayName();
                written.insert(rw.addNode(c.opType, inputs, outputs, c.attributes, {}, c.opType + " added" + feeds + ": " + why,
                                          c.name, c.domain));
                continue;
            }
            kept.insert(original);
            const Node& o = g.node(original);
            if (o.opType == c.opType && canonicalDomain(o.domain) == canonicalDomain(c.domain) && o.inputs == inputs &&
                o.outputs == outputs && sameAttributes(o.attributes, c.attributes))
                continue;
            // Copies: replaceNodes erases `o` before it names the new node.
            const std::string reason = o.displayName() + ": " + describeChange(o, c, o.inputs.size(), inputs.size()) + ", " + why;
            const std::string nameHint = o.name.empty() ? c.opType : o.name;
            written.insert(rw.replaceNodes({original}, c.opType, inputs, outputs, c.attributes, reason, nameHint, c.domain));
        }
        // Original nodes the converter dropped: their outputs must be unread by now.
        for (NodeId n : std::vector<NodeId>(g.nodeOrder())) {
            if (kept.count(n) || written.count(n) || !g.hasNode(n)) continue;
            const Node& node = g.node(n);
            bool read = false;
            for (ValueId v : node.outputs) read |= v != kNone && (!g.value(v).consumers.empty() || g.value(v).isGraphOutput);
            if (read)
                throwUnsupported("the version converter's graph has no counterpart for " + node.displayName() +
                                 ", whose outputs are still read");
            rw.eraseNode(n, node.displayName() + " removed: " + why);
        }
        rw.restoreTopologicalOrder();
        rw.removeDeadValues();
    }
};

}  // namespace

std::unique_ptr<Pass> makeVersionConvertPass() { return std::make_unique<VersionConvertPass>(); }

}  // namespace passlens::passes
