// The reverse-mode driver: from the loss back to the requested tensors, visiting only nodes on a
// path between them, in reverse topological order. Each node's gradient rule receives the summed
// gradients of its outputs and adds its inputs' contributions; several contributions to one
// tensor are added by a Sum node.
#include <algorithm>
#include <map>
#include <sstream>
#include <unordered_set>

#include "autodiff/Autodiff.h"
#include "autodiff/GradientBuilder.h"
#include "autodiff/Loss.h"
#include "ir/Tensor.h"
#include "ir/Error.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff {

using namespace passlens::ir;

std::vector<std::string> parseWrtList(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    if (out.empty()) throwBadInput("--wrt needs 'all' or a comma-separated list of tensor names");
    return out;
}

namespace {

bool isFloatTensor(const Graph& g, ValueId v) {
    return v != kNone && g.value(v).type.isTensor() && isFloatingPoint(g.value(v).type.elemType);
}

ValueId resolveOutput(const Graph& g, const std::string& name) {
    if (g.outputs().empty()) throwBadInput("the model has no outputs");
    if (name.empty()) return g.outputs().front();
    for (ValueId v : g.outputs())
        if (g.value(v).name == name) return v;
    std::string valid;
    for (ValueId v : g.outputs()) valid += (valid.empty() ? "" : ", ") + g.value(v).name;
    throwBadInput("--output '" + name + "' is not a graph output; outputs: " + valid);
}

std::vector<ValueId> resolveWrt(const Graph& g, const std::vector<std::string>& names) {
    std::vector<ValueId> out;
    if (names.size() == 1 && names[0] == "all") {
        for (ValueId v : g.initializerOrder())
            if (isFloatTensor(g, v) || (g.value(v).initializer && isFloatingPoint(g.value(v).initializer->dtype))) out.push_back(v);
        if (out.empty()) throwBadInput("--wrt all: the model has no float initializers");
        return out;
    }
    for (const auto& n : names) {
        auto v = g.findValue(n);
        if (!v) throwBadInput("--wrt: no tensor named '" + n + "'");
        const Value& val = g.value(*v);
        const DataType t = val.initializer ? val.initializer->dtype : val.type.elemType;
        if (!isFloatingPoint(t)) throwBadInput("--wrt: '" + n + "' is " + std::string(dataTypeName(t)) + ", not a floating-point tensor");
        if (std::find(out.begin(), out.end(), *v) != out.end()) throwBadInput("--wrt: '" + n + "' is listed twice");
        out.push_back(*v);
    }
    return out;
}

/// Emits a node that belongs to the backward graph but to no single forward node's rule (sums of
/// contributions, renamed outputs, zero gradients).
NodeId emitPlain(EmitState& st, const std::string& type, std::vector<ValueId> inputs, ValueId out, std::vector<Attribute> attrs,
                 NodeId forward, const std::string& forwardName, const std::string& reason) {
    NodeId n = forward == kNone ? st.rw.addNode(type, std::move(inputs), {out}, std::move(attrs), {}, reason,
                                                forwardName + "_grad/" + type)
                                : st.rw.addDerivedNode(type, std::move(inputs), {out}, std::move(attrs), forward, reason,
                                                       forwardName + "_grad/" + type);
    NodeProvenance p;
    p.role = Role::Backward;
    p.forwardNode = forwardName;
    setProvenance(st.rw, n, p);
    st.emitted.push_back(n);
    return n;
}

class Driver {
public:
    Driver(passes::Rewriter& rw, int64_t opset) : st_{rw, opset, {}, {}}, g_(rw.graph()) {}

    TrainingGraph run(const AutodiffOptions& o) {
        TrainingGraph out;
        ValueId y = resolveOutput(g_, o.output);
        out.wrt = resolveWrt(g_, o.wrt);
        for (ValueId w : out.wrt) checkFreeName(g_.value(w).name + "_grad");
        const std::vector<ValueId> originalOutputs = g_.outputs();
        LossNodes loss = addLoss(st_.rw, o.loss, y, st_.opset);
        out.loss = loss.loss;
        out.lossNodes = loss.nodes;

        auto order = g_.topologicalOrder();
        if (!order) throwBadInput("the graph has a cycle");
        markPaths(*order, out.wrt, out.loss);
        checkRules(*order, out.wrt);

        const DataType lossType = g_.value(out.loss).type.elemType;
        ValueId seed = st_.rw.newInitializer("loss_grad", floatTensorOf(lossType, {}, {1.0}));
        st_.created.insert(seed);
        contributions_[out.loss].push_back(seed);

        for (auto it = order->rbegin(); it != order->rend(); ++it)
            if (onPath_.count(*it)) differentiate(*it);

        std::unordered_set<ValueId> claimed;
        for (ValueId w : out.wrt) out.gradients.push_back(gradientOutput(w, claimed, out.zeroGradients));
        std::vector<ValueId> outputs = originalOutputs;
        outputs.push_back(out.loss);
        outputs.insert(outputs.end(), out.gradients.begin(), out.gradients.end());
        st_.rw.setGraphOutputs(outputs, "the loss and the gradients of " + std::to_string(out.wrt.size()) + " tensors become outputs");
        out.backwardNodes = st_.emitted;
        return out;
    }

private:
    void checkFreeName(const std::string& name) const {
        if (g_.findValue(name)) throwBadInput("cannot add output '" + name + "': the model already has a value of that name");
    }

    bool differentiableSlot(const Node& n, size_t slot) const {
        const GradientRule* rule = gradientRegistry().find(n.domain, n.opType);
        if (rule && std::find(rule->nonDifferentiable.begin(), rule->nonDifferentiable.end(), slot) != rule->nonDifferentiable.end())
            return false;
        return isFloatTensor(g_, n.inputs[slot]);
    }

    /// Values the loss depends on, values that depend on a requested tensor, and the nodes
    /// between them.
    void markPaths(const std::vector<NodeId>& order, const std::vector<ValueId>& wrt, ValueId loss) {
        fromWrt_.insert(wrt.begin(), wrt.end());
        for (NodeId n : order) {
            const Node& node = g_.node(n);
            bool fed = false;
            for (size_t i = 0; i < node.inputs.size(); ++i)
                if (node.inputs[i] != kNone && fromWrt_.count(node.inputs[i]) && differentiableSlot(node, i)) fed = true;
            if (!fed) continue;
            for (ValueId v : node.outputs)
                if (isFloatTensor(g_, v)) fromWrt_.insert(v);
        }
        std::unordered_set<ValueId> toLoss{loss};
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            const Node& node = g_.node(*it);
            // Only float outputs carry gradients: a Shape node feeding a Reshape is not on a path.
            bool feeds = std::any_of(node.outputs.begin(), node.outputs.end(),
                                     [&](ValueId v) { return toLoss.count(v) && isFloatTensor(g_, v); });
            if (!feeds) continue;
            bool fed = false;
            for (size_t i = 0; i < node.inputs.size(); ++i)
                if (node.inputs[i] != kNone && fromWrt_.count(node.inputs[i]) && differentiableSlot(node, i)) fed = true;
            if (fed) onPath_.insert(*it);
            for (ValueId v : node.inputs)
                if (v != kNone) toLoss.insert(v);
        }
    }

    void checkRules(const std::vector<NodeId>& order, const std::vector<ValueId>& wrt) const {
        for (NodeId n : order) {
            if (!onPath_.count(n)) continue;
            const Node& node = g_.node(n);
            if (gradientRegistry().find(node.domain, node.opType)) continue;
            std::string op = (canonicalDomain(node.domain).empty() ? "" : node.domain + ".") + node.opType;
            throwUnsupported("no gradient rule for op " + op + " (node '" + node.displayName() +
                             "', on the path from '" + g_.value(wrtThrough(node, wrt)).name + "' to the loss); passlens-cli grad covers: " +
                             coveredList());
        }
    }

    /// A requested tensor whose gradient has to pass through `node` (searched backwards along
    /// the values that depend on a requested tensor), so the error names a parameter that needs it.
    ValueId wrtThrough(const Node& node, const std::vector<ValueId>& wrt) const {
        const std::unordered_set<ValueId> wanted(wrt.begin(), wrt.end());
        std::vector<ValueId> stack;
        for (size_t i = node.inputs.size(); i-- > 0;)
            if (node.inputs[i] != kNone && fromWrt_.count(node.inputs[i]) && differentiableSlot(node, i)) stack.push_back(node.inputs[i]);
        std::unordered_set<ValueId> seen;
        while (!stack.empty()) {
            const ValueId v = stack.back();
            stack.pop_back();
            if (!seen.insert(v).second) continue;
            if (wanted.count(v)) return v;
            const NodeId p = g_.value(v).producer;
            if (p == kNone) continue;
            const Node& producer = g_.node(p);
            for (size_t i = producer.inputs.size(); i-- > 0;)
                if (producer.inputs[i] != kNone && fromWrt_.count(producer.inputs[i]) && differentiableSlot(producer, i))
                    stack.push_back(producer.inputs[i]);
        }
        return wrt.front();
    }

    static std::string coveredList() {
        std::string s;
        for (const auto& op : coveredOps()) s += (s.empty() ? "" : ", ") + op;
        return s;
    }

    /// The summed gradient of `v` (kNone when nothing reached it).
    ValueId accumulated(ValueId v) {
        auto it = contributions_.find(v);
        if (it == contributions_.end() || it->second.empty()) return kNone;
        auto& parts = it->second;
        const std::string name = g_.value(v).name;
        if (parts.size() == 1) {
            // Name the adjoint after its tensor (v̄ of "h" is "h_grad") where the value is ours alone.
            const Value& p = g_.value(parts[0]);
            if (st_.created.count(parts[0]) && p.producer != kNone && !p.isGraphOutput && named_.insert(parts[0]).second)
                st_.rw.renameValue(parts[0], g_.uniqueValueName(name + "_grad"));
            return parts[0];
        }
        const NodeId producer = g_.value(v).producer;
        const TypeInfo type = g_.value(v).type;
        ValueId sum = st_.rw.newValue(name + "_grad");
        named_.insert(sum);
        st_.rw.setValueType(sum, type);
        st_.created.insert(sum);
        emitPlain(st_, "Sum", parts, sum, {}, producer, producer == kNone ? name : g_.node(producer).displayName(),
                  "adds the " + std::to_string(parts.size()) + " gradient contributions to '" + name + "'");
        parts = {sum};
        return sum;
    }

    void differentiate(NodeId n) {
        std::vector<ValueId> outGrads;
        bool any = false;
        const std::vector<ValueId> outputs = g_.node(n).outputs;  // accumulated() edits the graph
        for (ValueId v : outputs) {
            outGrads.push_back(v == kNone ? kNone : accumulated(v));
            any = any || outGrads.back() != kNone;
        }
        if (!any) return;
        const Node& node = g_.node(n);
        std::vector<bool> needs(node.inputs.size(), false);
        for (size_t i = 0; i < node.inputs.size(); ++i)
            needs[i] = node.inputs[i] != kNone && fromWrt_.count(node.inputs[i]) && differentiableSlot(node, i);
        GradContext ctx(st_, n, outGrads, needs);
        gradientRegistry().find(node.domain, node.opType)->build(ctx);
        // The rule edited the graph: read the node again, into copies (setValueType is an edit too).
        const std::vector<ValueId> inputs = g_.node(n).inputs;
        const std::string opType = g_.node(n).opType;
        for (size_t i = 0; i < inputs.size(); ++i) {
            if (!needs[i]) continue;
            ValueId grad = ctx.gradIn(i);
            if (grad == kNone)
                throw Error(ErrorKind::Internal, "gradient rule of " + opType + " set no gradient for input " + std::to_string(i));
            if (!g_.value(grad).type.known() && st_.created.count(grad)) st_.rw.setValueType(grad, g_.value(inputs[i]).type);
            contributions_[inputs[i]].push_back(grad);
        }
    }

    ValueId gradientOutput(ValueId w, std::unordered_set<ValueId>& claimed, std::vector<std::string>& zeros) {
        const Value& wv = g_.value(w);
        const std::string wName = wv.name;  // wv is not read after the first edit below
        const std::string name = wName + "_grad";
        const TypeInfo type = wv.type.known() ? wv.type
                                              : TypeInfo::tensor(wv.initializer->dtype, Shape{[&] {
                                                    std::vector<Dim> d;
                                                    for (int64_t x : wv.initializer->dims) d.push_back(Dim::of(x));
                                                    return d;
                                                }()});
        ValueId grad = accumulated(w);
        if (grad == kNone) {
            // No path from w to the loss: its gradient is zero.
            zeros.push_back(wName);
            if (!type.shape || !type.shape->isStatic())
                throwUnsupported("'" + wName + "' does not reach the loss and its shape is not static, so its zero gradient cannot be built");
            ValueId out = st_.rw.newValueNamed(name, type);
            const size_t es = elementSize(type.elemType);
            std::vector<char> zero(es, 0);
            auto dims = type.shape->staticDims();
            emitPlain(st_, "ConstantOfShape", {st_.rw.newInitializer(name + "_shape", int64Tensor({int64_t(dims.size())}, dims))}, out,
                      {Attribute::makeTensor("value", makeTensor(type.elemType, {1}, zero.data(), es))}, kNone, wName,
                      "'" + wName + "' has no path to the loss: its gradient is zero");
            return out;
        }
        const Value& gv = g_.value(grad);
        const bool renamable = st_.created.count(grad) && gv.producer != kNone && !gv.isGraphOutput && !claimed.count(grad) &&
                               !gv.isConstant();
        if (renamable) {
            st_.rw.renameValue(grad, name);
            claimed.insert(grad);
            return grad;
        }
        ValueId out = st_.rw.newValueNamed(name, type);
        emitPlain(st_, "Identity", {grad}, out, {}, kNone, wName, "names the gradient of '" + wName + "'");
        return out;
    }

    EmitState st_;
    const Graph& g_;
    std::unordered_set<ValueId> fromWrt_;
    std::unordered_set<NodeId> onPath_;
    std::map<ValueId, std::vector<ValueId>> contributions_;
    std::unordered_set<ValueId> named_;  ///< gradient values already renamed after their tensor
};

}  // namespace

TrainingGraph buildTrainingGraph(passes::Rewriter& rw, const AutodiffOptions& options) {
    const int64_t opset = rw.model().opsetFor("");
    if (opset < 11)
        throwUnsupported("autodiff needs ai.onnx opset 11 or newer (the model imports " + std::to_string(opset) +
                         "); convert it first with passlens-cli optimize --target-opset 17");
    return Driver(rw, opset).run(options);
}

}  // namespace passlens::autodiff
