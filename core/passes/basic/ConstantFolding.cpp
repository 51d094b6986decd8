// Constant folding with the interpreter: Constant nodes become initializers; a deterministic
// node whose inputs are all constant is evaluated and its outputs become initializers; Shape
// and Size of values with static shapes fold without their input. A size limit keeps huge
// results out of the file (missed remark).
#include <set>

#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "passes/basic/BasicPasses.h"

namespace passlens::passes {

using namespace passlens::ir;

namespace {

const std::set<std::string> kNeverFold = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                          "Multinomial", "Bernoulli", "Dropout", "If", "Loop", "Scan"};

bool isConstant(const Graph& g, ValueId v) {
    if (v == kNone) return true;  // omitted optional input
    const Value& val = g.value(v);
    return val.initializer && !val.isGraphInput;
}

std::string humanBytes(int64_t b) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    double x = static_cast<double>(b);
    int u = 0;
    while (x >= 1024 && u < 4) { x /= 1024; ++u; }
    char buf[32];
    std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", x, units[u]);
    return buf;
}

/// Shape/Size of a value whose shape is static, without evaluating the input.
TensorPtr foldShapeOf(const Graph& g, const Node& n) {
    if (n.inputs.empty() || n.inputs[0] == kNone) return nullptr;
    const TypeInfo& t = g.value(n.inputs[0]).type;
    if (!t.isTensor() || !t.shape || !t.shape->isStatic()) return nullptr;
    std::vector<int64_t> dims = t.shape->staticDims();
    if (n.opType == "Size") {
        int64_t count = 1;
        for (auto d : dims) count *= d;
        return makeTensorOf(DataType::Int64, {}, std::vector<int64_t>{count});
    }
    int64_t rank = static_cast<int64_t>(dims.size());
    int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    std::vector<int64_t> out(dims.begin() + start, dims.begin() + std::max(start, end));
    return makeTensorOf(DataType::Int64, {static_cast<int64_t>(out.size())}, out);
}

}  // namespace

void ConstantFolding::runImpl(PassContext& ctx) const {
    const int64_t limit = ctx.options().foldSizeLimitBytes;
    ctx.forEachGraph([&](Rewriter& rw) {
        Graph& g = rw.graph();
        auto order = g.topologicalOrder();
        if (!order) return;
        for (NodeId n : *order) {
            ctx.checkCancelled();
            if (!g.hasNode(n)) continue;
            const Node& node = g.node(n);
            const bool standard = canonicalDomain(node.domain).empty();
            if (!standard || kNeverFold.count(node.opType)) continue;

            if ((node.opType == "Shape" || node.opType == "Size") && !isConstant(g, node.inputs[0])) {
                if (TensorPtr t = foldShapeOf(g, node)) {
                    rw.setRule("fold-shape");
                    std::string name = node.displayName();
                    rw.foldToConstant(node.outputs[0], t, name + " reads a static shape");
                    rw.applied({}, name + " folded: input shape is static");
                }
                continue;
            }
            bool allConstant = true;
            for (ValueId v : node.inputs) allConstant = allConstant && isConstant(g, v);
            if (!allConstant) continue;
            rw.setRule(node.opType == "Constant" ? "constant-to-initializer" : "fold-node");
            bool graphOutput = false;
            for (ValueId v : node.outputs)
                if (v != kNone && g.value(v).isGraphOutput) graphOutput = true;
            if (graphOutput && node.opType != "Constant") {
                rw.missed({n}, "not folded: " + node.displayName() + " computes a graph output");
                continue;
            }
            std::string why;
            if (!eval::isSupported(rw.model(), g, node, &why)) {
                rw.missed({n}, "not folded: " + why);
                continue;
            }
            std::vector<TensorPtr> inputs;
            for (ValueId v : node.inputs) inputs.push_back(v == kNone ? nullptr : g.value(v).initializer);
            std::vector<TensorPtr> outputs;
            try {
                outputs = eval::evalNode(rw.model(), g, n, inputs);
            } catch (const Error& e) {
                rw.missed({n}, "not folded: " + std::string(e.what()));
                continue;
            }
            int64_t bytes = 0;
            for (const auto& t : outputs)
                if (t) bytes += static_cast<int64_t>(t->byteSize());
            int64_t inputBytes = 0;
            for (const auto& t : inputs)
                if (t) inputBytes += static_cast<int64_t>(t->byteSize());
            if (bytes > limit && bytes > inputBytes) {
                rw.missed({n}, "not folded: output would be " + humanBytes(bytes) + ", above the fold limit of " + humanBytes(limit));
                continue;
            }
            // Folding the last output erases the node: take what we need from it first.
            const std::string name = node.displayName();
            const bool isConstantNode = node.opType == "Constant";
            const std::vector<ValueId> outs = node.outputs;
            for (size_t i = 0; i < outs.size() && i < outputs.size(); ++i)
                if (outs[i] != kNone && outputs[i])
                    rw.foldToConstant(outs[i], outputs[i],
                                      isConstantNode ? name + " becomes an initializer" : name + " has only constant inputs");
            rw.applied({}, name + (isConstantNode ? " became an initializer" : " folded to a constant"));
        }
        // Inputs of folded nodes that nothing reads any more.
        for (ValueId v : std::vector<ValueId>(g.initializerOrder())) {
            const Value& val = g.value(v);
            if (val.consumers.empty() && !val.isGraphOutput && !val.isGraphInput) {
                bool captured = false;
                for (NodeId m : g.nodeOrder())
                    if (g.node(m).hasSubgraphs())
                        for (const auto& c : g.capturedNames(m)) captured = captured || c == val.name;
                if (!captured) rw.removeInitializer(v, "'" + val.name + "' is no longer read after folding");
            }
        }
    });
}

}  // namespace passlens::passes
