#include "autodiff/Loss.h"

#include "autodiff/Autodiff.h"
#include "autodiff/GradientBuilder.h"
#include "ir/Tensor.h"
#include "ir/Error.h"
#include "passes/Rewriter.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

class LossBuilder {
public:
    LossBuilder(passes::Rewriter& rw, ValueId output, int64_t opset, const std::string& kind)
        : rw_(rw), g_(rw.graph()), output_(output), opset_(opset), kind_(kind) {}

    ValueId op(const std::string& type, std::vector<ValueId> inputs, TypeInfo outType, std::vector<Attribute> attrs = {},
               const std::string& valueName = {}) {
        ValueId out = valueName.empty() ? rw_.newValue("loss_" + type, std::move(outType))
                                        : rw_.newValueNamed(valueName, std::move(outType));
        NodeId n = rw_.addNode(type, std::move(inputs), {out}, std::move(attrs), {}, kind_ + " loss over '" + g_.value(output_).name + "'",
                               "loss/" + type);
        NodeProvenance p;
        p.role = Role::Loss;
        setProvenance(rw_, n, p);
        result.nodes.push_back(n);
        return out;
    }
    ValueId ints(const std::vector<int64_t>& v, const std::string& hint) {
        return rw_.newInitializer("loss_" + hint, int64Tensor({int64_t(v.size())}, v));
    }
    ValueId reduce(const std::string& type, ValueId x, const std::vector<int64_t>& axes, TypeInfo t, const std::string& name = {}) {
        const bool axesInput = type == "ReduceSum" ? opset_ >= 13 : opset_ >= 18;
        std::vector<Attribute> attrs{Attribute::makeInt("keepdims", 0)};
        if (axes.empty()) return op(type, {x}, std::move(t), std::move(attrs), name);  // every axis
        if (axesInput) return op(type, {x, ints(axes, "axes")}, std::move(t), std::move(attrs), name);
        attrs.push_back(Attribute::makeInts("axes", axes));
        return op(type, {x}, std::move(t), std::move(attrs), name);
    }

    LossNodes result;

private:
    passes::Rewriter& rw_;
    const Graph& g_;
    ValueId output_;
    int64_t opset_;
    std::string kind_;
};

void requireFreeName(const Graph& g, const std::string& name) {
    if (g.findValue(name)) throwBadInput("cannot add '" + name + "': the model already has a value of that name");
}

}  // namespace

LossNodes addLoss(passes::Rewriter& rw, const std::string& kind, ValueId output, int64_t opset) {
    const Graph& g = rw.graph();
    const Value& y = g.value(output);
    const TypeInfo yType = y.type;
    const std::string yName = y.name;
    if (!yType.isTensor() || !isFloatingPoint(yType.elemType))
        throwBadInput("output '" + yName + "' is " + yType.toString() + "; a loss needs a floating-point tensor");
    const TypeInfo scalar = TypeInfo::tensor(yType.elemType, Shape{});
    requireFreeName(g, "loss");
    LossBuilder b(rw, output, opset, kind);
    if (kind == "mse") {
        requireFreeName(g, yName + "_target");
        ValueId target = rw.addGraphInput(yName + "_target", yType, "the mse loss compares '" + yName + "' with this target");
        b.result.extraInput = target;
        ValueId diff = b.op("Sub", {output, target}, yType);
        ValueId sq = b.op("Mul", {diff, diff}, yType);
        b.result.loss = b.reduce("ReduceMean", sq, {}, scalar, "loss");
    } else if (kind == "cross-entropy") {
        if (!yType.shape || yType.shape->rank() != 2)
            throwBadInput("cross-entropy needs logits of shape [N, classes]; output '" + yName + "' is " + yType.toString());
        const Dim batch = yType.shape->dims[0], classes = yType.shape->dims[1];
        if (!classes.isStatic()) throwBadInput("cross-entropy needs a static class count; output '" + yName + "' is " + yType.toString());
        requireFreeName(g, yName + "_labels");
        ValueId labels = rw.addGraphInput(yName + "_labels", TypeInfo::tensor(DataType::Int64, Shape{{batch}}),
                                            "the cross-entropy loss reads the class labels of '" + yName + "'");
        b.result.extraInput = labels;
        ValueId logProbs = b.op("LogSoftmax", {output}, yType, {Attribute::makeInt("axis", 1)});
        ValueId depth = b.ints({*classes.value}, "classes");
        ValueId offOn = rw.newInitializer("loss_off_on", floatTensorOf(yType.elemType, {2}, {0.0, 1.0}));
        ValueId oneHot = b.op("OneHot", {labels, depth, offOn}, yType, {Attribute::makeInt("axis", 1)});
        ValueId picked = b.reduce("ReduceSum", b.op("Mul", {logProbs, oneHot}, yType), {1},
                                  TypeInfo::tensor(yType.elemType, Shape{{batch}}));
        ValueId mean = b.reduce("ReduceMean", picked, {}, scalar);
        b.result.loss = b.op("Neg", {mean}, scalar, {}, "loss");
    } else if (kind == "none") {
        bool one = yType.shape && yType.shape->isStatic();
        if (one)
            for (const Dim& d : yType.shape->dims) one = one && *d.value == 1;
        if (!one) throwBadInput("--loss none needs an output of one element; '" + yName + "' is " + yType.toString());
        b.result.loss = b.op("Reshape", {output, rw.newInitializer("loss_scalar_shape", int64Tensor({0}, {}))}, scalar, {}, "loss");
    } else {
        throwBadInput("unknown loss '" + kind + "'; valid losses: mse, cross-entropy, none");
    }
    return b.result;
}

}  // namespace passlens::autodiff
