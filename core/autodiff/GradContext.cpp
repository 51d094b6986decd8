// GradContext: what a gradient builder sees of the forward node, and the helpers it emits
// backward nodes with. Every node goes through emit(), which stamps provenance on it.
#include <algorithm>
#include <numeric>

#include "autodiff/Autodiff.h"
#include "autodiff/GradientBuilder.h"
#include "ir/Tensor.h"
#include "ir/Error.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff {

using namespace passlens::ir;

GradContext::GradContext(EmitState& state, NodeId forward, std::vector<ValueId> outputGrads, std::vector<bool> needsGrad)
    : state_(state), forward_(forward), outputGrads_(std::move(outputGrads)), needs_(std::move(needsGrad)),
      inputGrads_(needs_.size(), kNone) {}

const Node& GradContext::node() const { return state_.rw.graph().node(forward_); }
const Graph& GradContext::graph() const { return state_.rw.graph(); }
size_t GradContext::inputCount() const { return node().inputs.size(); }

ValueId GradContext::input(size_t i) const { return i < node().inputs.size() ? node().inputs[i] : kNone; }
ValueId GradContext::output(size_t i) const { return i < node().outputs.size() ? node().outputs[i] : kNone; }
ValueId GradContext::gradOut(size_t i) const { return i < outputGrads_.size() ? outputGrads_[i] : kNone; }
bool GradContext::needsGrad(size_t i) const { return i < needs_.size() && needs_[i]; }
ValueId GradContext::gradIn(size_t i) const { return i < inputGrads_.size() ? inputGrads_[i] : kNone; }

void GradContext::setGradIn(size_t i, ValueId grad) {
    if (i >= inputGrads_.size()) throw Error(ErrorKind::Internal, where() + ": gradient set for input " + std::to_string(i) + " it does not have");
    inputGrads_[i] = grad;
}

ValueId GradContext::gradOutOrZeros(size_t i) {
    if (gradOut(i) != kNone) return gradOut(i);
    return zerosLike(output(i));
}

ValueId GradContext::zerosLike(ValueId v) {
    if (auto s = staticShape(v)) return zeros(*s);
    return op("ConstantOfShape", {op("Shape", {v})}, {Attribute::makeTensor("value", floatTensorOf(floatType(), {1}, {0.0}))});
}

ValueId GradContext::shapeDims(ValueId v, int64_t begin, int64_t end) {
    if (auto s = staticShape(v)) {
        const int64_t r = int64_t(s->size());
        const int64_t b = std::clamp<int64_t>(begin < 0 ? begin + r : begin, 0, r);
        const int64_t e = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
        return ints(std::vector<int64_t>(s->begin() + b, s->begin() + std::max(b, e)), "dims");
    }
    return op("Slice", {op("Shape", {v}), ints({begin}, "starts"), ints({end}, "ends")});
}

ValueId GradContext::int64Scalar(int64_t v) { return constant(int64Tensor({}, {v}), "i"); }

ValueId GradContext::zeros(const std::vector<int64_t>& dims) {
    return op("ConstantOfShape", {ints(dims, "zeros_shape")}, {Attribute::makeTensor("value", floatTensorOf(floatType(), {1}, {0.0}))});
}

TensorPtr floatTensorOf(DataType dt, std::vector<int64_t> dims, const std::vector<double>& v) {
    if (dt == DataType::Double) return makeTensorOf<double>(dt, std::move(dims), v);
    return makeTensorOf<float>(DataType::Float, std::move(dims), std::vector<float>(v.begin(), v.end()));
}

ValueId GradContext::floats(std::vector<int64_t> dims, const std::vector<double>& v, const std::string& hint) {
    return constant(floatTensorOf(floatType(), std::move(dims), v), hint);
}

std::string GradContext::where() const { return node().opType + " '" + node().displayName() + "'"; }

void GradContext::unsupported(const std::string& what) const {
    throwUnsupported("no gradient for " + where() + ": " + what);
}

DataType GradContext::floatType() const {
    for (ValueId v : node().inputs)
        if (v != kNone && isFloatingPoint(graph().value(v).type.elemType)) return graph().value(v).type.elemType;
    for (ValueId v : node().outputs)
        if (v != kNone && isFloatingPoint(graph().value(v).type.elemType)) return graph().value(v).type.elemType;
    return DataType::Float;
}

std::vector<ValueId> GradContext::opMulti(const std::string& type, std::vector<ValueId> inputs, size_t outputs,
                                          std::vector<Attribute> attrs) {
    passes::Rewriter& rw = state_.rw;
    const std::string base = node().displayName() + "_grad";
    std::vector<ValueId> outs;
    for (size_t k = 0; k < outputs; ++k) {
        ValueId v = rw.newValue(base + "_" + type);
        state_.created.insert(v);
        outs.push_back(v);
    }
    NodeProvenance p;
    p.role = Role::Backward;
    p.forwardNode = node().displayName();
    for (ValueId in : inputs)
        if (in != kNone && !state_.created.count(in)) {
            const std::string& name = graph().value(in).name;
            if (std::find(p.saved.begin(), p.saved.end(), name) == p.saved.end()) p.saved.push_back(name);
        }
    p.note = note_;
    NodeId id = rw.addDerivedNode(type, std::move(inputs), outs, std::move(attrs), forward_,
                                  "gradient of " + node().displayName() + " (" + node().opType + ")", base + "/" + type);
    setProvenance(rw, id, p);
    state_.emitted.push_back(id);
    return outs;
}

ValueId GradContext::op(const std::string& type, std::vector<ValueId> inputs, std::vector<Attribute> attrs) {
    return opMulti(type, std::move(inputs), 1, std::move(attrs))[0];
}

ValueId GradContext::constant(TensorPtr t, const std::string& hint) {
    ValueId v = state_.rw.newInitializer(node().displayName() + "_grad_" + hint, std::move(t));
    state_.created.insert(v);
    return v;
}

ValueId GradContext::scalar(double v) {
    if (floatType() != DataType::Float && floatType() != DataType::Double)
        unsupported("gradients are built for float32 and float64 tensors only");
    return floats({}, {v}, "c");
}

ValueId GradContext::ints(const std::vector<int64_t>& v, const std::string& hint) {
    return constant(int64Tensor({int64_t(v.size())}, v), hint);
}

std::optional<std::vector<int64_t>> GradContext::staticShape(ValueId v) const {
    const TypeInfo& t = graph().value(v).type;
    if (!t.isTensor() || !t.shape || !t.shape->isStatic()) return std::nullopt;
    return t.shape->staticDims();
}

std::vector<int64_t> GradContext::requireStaticShape(ValueId v, const std::string& why) const {
    if (auto s = staticShape(v)) return *s;
    const TypeInfo& t = graph().value(v).type;
    throwUnsupported("no gradient for " + where() + ": '" + graph().value(v).name + "' has shape " +
                     (t.shape ? t.shape->toString() : std::string("?")) + ", static dims needed (" + why +
                     "); pin symbolic dims with --dim");
}

int64_t GradContext::rank(ValueId v) const {
    const TypeInfo& t = graph().value(v).type;
    if (!t.isTensor() || !t.shape)
        throwUnsupported("no gradient for " + where() + ": the rank of '" + graph().value(v).name + "' is unknown");
    return int64_t(t.shape->rank());
}

ValueId GradContext::shapeOf(ValueId v) {
    if (auto s = staticShape(v)) return ints(*s, "shape");
    return op("Shape", {v});
}

ValueId GradContext::reshapeLike(ValueId x, ValueId like) { return op("Reshape", {x, shapeOf(like)}); }
ValueId GradContext::reshape(ValueId x, const std::vector<int64_t>& dims) { return op("Reshape", {x, ints(dims, "shape")}); }

ValueId GradContext::reduceSum(ValueId x, const std::vector<int64_t>& axes, bool keepdims) {
    if (opset() >= 13) return op("ReduceSum", {x, ints(axes, "axes")}, {Attribute::makeInt("keepdims", keepdims)});
    return op("ReduceSum", {x}, {Attribute::makeInts("axes", axes), Attribute::makeInt("keepdims", keepdims)});
}

ValueId GradContext::reduceMean(ValueId x, const std::vector<int64_t>& axes, bool keepdims) {
    if (opset() >= 18) return op("ReduceMean", {x, ints(axes, "axes")}, {Attribute::makeInt("keepdims", keepdims)});
    return op("ReduceMean", {x}, {Attribute::makeInts("axes", axes), Attribute::makeInt("keepdims", keepdims)});
}

ValueId GradContext::sumToShapeOf(ValueId grad, ValueId operand) {
    // The gradient has the forward output's shape (binary ops broadcast to it).
    const TypeInfo& gt = graph().value(output(0)).type;
    if (!gt.shape) throwUnsupported("no gradient for " + where() + ": the rank of its output is unknown");
    return sumTo(grad, gt.shape->dims, operand);
}

ValueId GradContext::sumTo(ValueId grad, const std::vector<Dim>& gd, ValueId operand) {
    const TypeInfo& ot = graph().value(operand).type;
    if (!ot.shape)
        throwUnsupported("no gradient for " + where() + ": the rank of '" + graph().value(operand).name +
                         "' is unknown, cannot undo broadcasting");
    const auto& od = ot.shape->dims;
    auto text = [](const std::vector<Dim>& d) { return Shape{d}.toString(); };
    if (od.size() > gd.size())
        throwUnsupported("no gradient for " + where() + ": '" + graph().value(operand).name + "' (" + text(od) +
                         ") has a higher rank than its gradient (" + text(gd) + ")");
    const size_t lead = gd.size() - od.size();
    std::vector<int64_t> leading, broadcast;
    for (size_t i = 0; i < lead; ++i) leading.push_back(int64_t(i));
    // Broadcast axes: the operand has a static 1 where the gradient does not (a symbolic dim that
    // is 1 at run time sums over one element, which is harmless).
    for (size_t i = 0; i < od.size(); ++i) {
        const Dim& o = od[i];
        const Dim& r = gd[lead + i];
        if (o.isStatic() && *o.value == 1 && !(r.isStatic() && *r.value == 1)) broadcast.push_back(int64_t(i));
        else if (o.isStatic() && r.isStatic() && *o.value != *r.value)
            throwUnsupported("no gradient for " + where() + ": '" + graph().value(operand).name + "' (" + text(od) +
                             ") does not broadcast to " + text(gd));
    }
    // Leading axes vanish (keepdims=0), broadcast axes stay as 1 (keepdims=1): no Reshape needed.
    ValueId out = grad;
    if (!leading.empty()) out = reduceSum(out, leading, false);
    if (!broadcast.empty()) out = reduceSum(out, broadcast, true);
    return out;
}

ValueId GradContext::unsqueeze(ValueId x, const std::vector<int64_t>& axes) {
    if (opset() >= 13) return op("Unsqueeze", {x, ints(axes, "axes")});
    return op("Unsqueeze", {x}, {Attribute::makeInts("axes", axes)});
}

TensorPtr GradContext::constantTensor(ValueId v) const {
    if (v == kNone) return nullptr;
    const Value& val = graph().value(v);
    TensorPtr t = val.initializer;
    if (!t && val.producer != kNone) {
        const Node& p = graph().node(val.producer);
        if (p.opType == "Constant" && canonicalDomain(p.domain).empty())
            if (const Attribute* a = p.attr("value"); a && a->t) t = a->t;
    }
    return t;
}

std::optional<std::vector<int64_t>> GradContext::constantInts(ValueId v) const {
    const TensorPtr t = constantTensor(v);
    if (!t) return std::nullopt;
    std::vector<int64_t> out;
    if (t->dtype == DataType::Int64) for (int64_t i = 0; i < t->elementCount(); ++i) out.push_back(t->as<int64_t>()[i]);
    else if (t->dtype == DataType::Int32) for (int64_t i = 0; i < t->elementCount(); ++i) out.push_back(t->as<int32_t>()[i]);
    else return std::nullopt;
    return out;
}

ValueId GradContext::pickSaved(const std::vector<ValueId>& candidates) {
    auto alive = [&](ValueId v) {
        const Value& val = graph().value(v);
        return val.isGraphInput || val.isGraphOutput || val.isConstant();
    };
    ValueId best = candidates.front();
    std::string why = "it is the first choice";
    for (ValueId c : candidates) {
        if (alive(c) && !alive(best)) { best = c; why = "it stays alive anyway (graph input, output or initializer)"; }
    }
    if (!alive(best)) {
        size_t most = graph().value(best).consumers.size();
        for (ValueId c : candidates)
            if (graph().value(c).consumers.size() > most) {
                best = c;
                most = graph().value(c).consumers.size();
                why = "more forward nodes read it, so it is kept for their gradients anyway";
            }
        if (best == candidates.front() && candidates.size() > 1) why = "the alternatives are read by no more forward nodes";
    }
    std::string alternatives;
    for (ValueId c : candidates)
        if (c != best) alternatives += (alternatives.empty() ? "'" : ", '") + graph().value(c).name + "'";
    note_ = "reads '" + graph().value(best).name + "' rather than " + alternatives + ": " + why;
    return best;
}

// ---- registry -------------------------------------------------------------------------------------

void GradientRegistry::add(const std::string& opType, GradientBuilder b, std::vector<size_t> nonDifferentiable) {
    if (rules_.count(opType)) throw Error(ErrorKind::Internal, "gradient rule for " + opType + " registered twice");
    rules_[opType] = {std::move(b), std::move(nonDifferentiable)};
}

const GradientRule* GradientRegistry::find(const std::string& domain, const std::string& opType) const {
    if (!canonicalDomain(domain).empty()) return nullptr;
    auto it = rules_.find(opType);
    return it == rules_.end() ? nullptr : &it->second;
}

std::vector<std::string> GradientRegistry::ops() const {
    std::vector<std::string> out;
    for (const auto& [name, rule] : rules_) out.push_back(name);
    return out;
}

const GradientRegistry& gradientRegistry() {
    static const GradientRegistry reg = [] {
        GradientRegistry r;
        registerElementwiseGradients(r);
        registerLinalgGradients(r);
        registerConvGradients(r);
        registerNormGradients(r);
        registerShapeGradients(r);
        registerReduceGradients(r);
        registerActivationGradients(r);
        registerResizeGradients(r);
        registerRoiAlignGradients(r);
        return r;
    }();
    return reg;
}

std::vector<std::string> coveredOps() { return gradientRegistry().ops(); }
bool hasGradientRule(const std::string& domain, const std::string& opType) {
    return gradientRegistry().find(domain, opType) != nullptr;
}

}  // namespace passlens::autodiff
