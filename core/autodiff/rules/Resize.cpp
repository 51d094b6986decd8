// Gradient of Resize on NCHW tensors (nearest, linear, cubic): every mode is separable, y =
// Rh · x · Rwᵀ per image and channel, so dx = Rhᵀ · g · Rw. The interpolation matrices are
// obtained by resizing an identity with the forward node's own attributes: an [1, L, L, 1] eye
// resized along its third axis to [1, L, L', 1] holds Rᵀ (row = input index, column = output
// index). Sizes come from Shape when the graph runs, so symbolic dims work.
#include <optional>

#include "autodiff/GradientBuilder.h"
#include "ir/Model.h"
#include "ir/Tensor.h"
#include "ir/Error.h"

namespace passlens::autodiff {

using namespace passlens::ir;

namespace {

bool sameDim(const Dim& a, const Dim& b) {
    if (a.isStatic() && b.isStatic()) return *a.value == *b.value;
    return !a.isStatic() && !b.isStatic() && !a.param.empty() && a.param == b.param;
}

/// True when `sizes` is Concat(Slice(Shape(x), 0, 2), ...): the exporter's way of keeping N and C.
bool sizesKeepLeadingDims(GradContext& c, ValueId sizes) {
    const Graph& g = c.graph();
    auto producer = [&](ValueId v, const char* type) -> const Node* {
        if (v == kNone || g.value(v).producer == kNone) return nullptr;
        const Node& n = g.node(g.value(v).producer);
        return n.opType == type && canonicalDomain(n.domain).empty() ? &n : nullptr;
    };
    const Node* cat = producer(sizes, "Concat");
    if (!cat || cat->inputs.empty() || cat->attrInt("axis", 0) != 0) return false;
    const Node* slice = producer(cat->inputs[0], "Slice");
    if (!slice || slice->inputs.size() < 3) return false;
    const Node* shape = producer(slice->inputs[0], "Shape");
    if (!shape || shape->inputs.empty() || shape->inputs[0] != c.input(0) || shape->attr("start") || shape->attr("end")) return false;
    auto starts = c.constantInts(slice->inputs[1]), ends = c.constantInts(slice->inputs[2]);
    auto axes = slice->inputs.size() > 3 ? c.constantInts(slice->inputs[3]) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{0});
    const bool unitSteps = slice->inputs.size() < 5 || slice->inputs[4] == kNone ||
                           c.constantInts(slice->inputs[4]) == std::optional<std::vector<int64_t>>(std::vector<int64_t>{1});
    return starts == std::vector<int64_t>{0} && ends == std::vector<int64_t>{2} && axes == std::vector<int64_t>{0} && unitSteps;
}

/// True when constant scales leave N and C alone.
bool scalesKeepLeadingDims(GradContext& c) {
    if (c.inputCount() < 3 || c.input(2) == kNone) return false;
    const TensorPtr t = c.constantTensor(c.input(2));
    return t && t->dtype == DataType::Float && t->elementCount() == 4 && t->as<float>()[0] == 1.0f && t->as<float>()[1] == 1.0f;
}

/// Rᵀ of one spatial axis (2 = height, 3 = width) as an [L_in, L_out] matrix.
ValueId interpolationMatrix(GradContext& c, int64_t axis) {
    const ValueId x = c.input(0), y = c.output(0);
    const ValueId lin = c.shapeDims(x, axis, axis + 1), lout = c.shapeDims(y, axis, axis + 1);
    ValueId square = c.op("Concat", {lin, lin}, {Attribute::makeInt("axis", 0)});
    ValueId eye = c.op("EyeLike", {c.op("ConstantOfShape", {square}, {Attribute::makeTensor("value", floatTensorOf(c.floatType(), {1}, {0.0}))})});
    ValueId eye4 = c.op("Reshape", {eye, c.op("Concat", {c.ints({1}, "one"), lin, lin, c.ints({1}, "one")}, {Attribute::makeInt("axis", 0)})});
    std::vector<Attribute> attrs;
    for (const Attribute& a : c.node().attributes)
        if (a.name == "mode" || a.name == "coordinate_transformation_mode" || a.name == "nearest_mode" || a.name == "cubic_coeff_a" ||
            a.name == "exclude_outside" || a.name == "antialias")
            attrs.push_back(a);
    const bool byScales = c.inputCount() > 2 && c.input(2) != kNone && !(c.inputCount() > 3 && c.input(3) != kNone);
    ValueId resized;
    if (byScales) {
        // The forward scale of this axis, so coordinate transforms that read the scale agree.
        if (c.graph().value(c.input(2)).type.elemType != DataType::Float) c.unsupported("scales must be float32");
        ValueId s = c.op("Slice", {c.input(2), c.ints({axis}, "starts"), c.ints({axis + 1}, "ends")});
        ValueId scales = c.op("Concat", {c.constant(floatTensorOf(DataType::Float, {2}, {1.0, 1.0}), "unit_scales"), s,
                                            c.constant(floatTensorOf(DataType::Float, {1}, {1.0}), "unit_scale")},
                              {Attribute::makeInt("axis", 0)});
        resized = c.op("Resize", {eye4, c.ints({}, "roi"), scales}, attrs);
    } else {
        ValueId sizes = c.op("Concat", {c.ints({1}, "one"), lin, lout, c.ints({1}, "one")}, {Attribute::makeInt("axis", 0)});
        resized = c.op("Resize", {eye4, kNone, kNone, sizes}, attrs);
    }
    return c.op("Reshape", {resized, c.op("Concat", {lin, lout}, {Attribute::makeInt("axis", 0)})});
}

void resizeGrad(GradContext& c) {
    if (c.opset() < 11) c.unsupported("Resize before opset 11");
    if (c.node().attrString("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
        c.unsupported("coordinate_transformation_mode tf_crop_and_resize");
    if (c.node().attr("axes") || c.node().attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
        c.unsupported("the axes and keep_aspect_ratio_policy attributes");
    const TypeInfo& xt = c.graph().value(c.input(0)).type;
    const TypeInfo& yt = c.graph().value(c.output(0)).type;
    if (!xt.shape || !yt.shape || xt.shape->rank() != 4 || yt.shape->rank() != 4)
        c.unsupported("input and output must be known to be 4-D (N, C, H, W)");
    const bool kept = (c.inputCount() > 3 && sizesKeepLeadingDims(c, c.input(3))) || scalesKeepLeadingDims(c);
    for (size_t a = 0; a < 2 && !kept; ++a)
        if (!sameDim(xt.shape->dims[a], yt.shape->dims[a]))
            c.unsupported("only H and W may be resized, and dim " + std::to_string(a) + " is not known to stay the same (" +
                          xt.shape->toString() + " → " + yt.shape->toString() + ")");
    // dx = Rhᵀ · g · Rw, with MatMul broadcasting over N and C.
    ValueId hT = interpolationMatrix(c, 2), wT = interpolationMatrix(c, 3);
    ValueId rows = c.op("MatMul", {hT, c.gradOut(0)});
    c.setGradIn(0, c.op("MatMul", {rows, c.op("Transpose", {wT}, {Attribute::makeInts("perm", {1, 0})})}));
}

}  // namespace

void registerResizeGradients(GradientRegistry& r) { r.add("Resize", resizeGrad, {1, 2, 3}); }

}  // namespace passlens::autodiff
