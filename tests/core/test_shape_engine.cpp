// The symbolic shape engine on models built in code: the shape chains torch.onnx writes
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Swin's window padding, Range, Where /
// Expand / ConstantOfShape), data-dependent sizes, and the types written back into the IR.
#include <gtest/gtest.h>

#include "eval/Interpreter.h"
#include "examples/Builder.h"
#include "ir/CaptureTypes.h"
#include "onnx/ShapeInference.h"
#include "shape/ShapeEngine.h"

using namespace passlens;
using namespace passlens::ir;
using passlens::shape::Bindings;
using passlens::shape::DimExpr;

namespace {

ValueId scalarInt(GraphBuilder& b, const std::string& name, int64_t v) { return b.constant(name, int64Tensor({}, {v})); }

/// The dims of a value as the IR now states them: numbers, or expressions ("?" = unknown).
std::vector<std::string> dimsOf(const Model& m, ValueId v) {
    std::vector<std::string> out;
    const auto& t = m.graph.value(v).type;
    if (!t.shape) return {"<rank unknown>"};
    for (const auto& d : t.shape->dims) out.push_back(d.value ? std::to_string(*d.value) : (d.param.empty() ? "?" : d.param));
    return out;
}

using Strings = std::vector<std::string>;

/// [batch, seq, 64] float input.
ValueId tokens(GraphBuilder& b) {
    return b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("seq"), Dim::of(64)});
}

}  // namespace

TEST(ShapeEngine, ShapeGatherUnsqueezeConcatReshapeChain) {
    GraphBuilder b("chain");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    ValueId axes0 = b.ints("axes0", {0});
    ValueId n = b.op("Unsqueeze", {b.op("Gather", {s, scalarInt(b, "i0", 0)}), axes0});
    ValueId t = b.op("Unsqueeze", {b.op("Gather", {s, scalarInt(b, "i1", 1)}), axes0});
    ValueId target = b.op("Concat", {n, t, b.ints("heads", {8, 8})}, {Attribute::makeInt("axis", 0)});
    ValueId y = b.op("Reshape", {x, target});
    // The same with -1: the engine divides the element count.
    ValueId z = b.op("Reshape", {x, b.op("Concat", {n, b.ints("minus1", {-1})}, {Attribute::makeInt("axis", 0)})});
    b.output(y);
    b.output(z);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, y), (Strings{"batch", "seq", "8", "8"}));
    EXPECT_EQ(dimsOf(m, z), (Strings{"batch", "64*seq"}));
    // Values: the Concat holds [batch, seq, 8, 8].
    auto a = shape::analyzeShapes(m.graph);
    ASSERT_TRUE(a.of(target).values);
    EXPECT_EQ((*a.of(target).values)[1]->toString(), "seq");
    EXPECT_TRUE(a.conflicts.empty());
}

TEST(ShapeEngine, SwinWindowPaddingChain) {
    // pad_h = (8 - h % 8) % 8; x = F.pad(x, (0, 0, 0, pad_w, 0, pad_h)); windows of 8x8.
    GraphBuilder b("swin_pad");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::of(1), Dim::symbol("h"), Dim::symbol("w"), Dim::of(96)});
    ValueId s = b.op("Shape", {x});
    ValueId eight = scalarInt(b, "eight", 8);
    auto padOf = [&](int64_t axis) {
        ValueId d = b.op("Gather", {s, scalarInt(b, "axis" + std::to_string(axis), axis)});
        return b.op("Mod", {b.op("Sub", {eight, b.op("Mod", {d, eight})}), eight});
    };
    ValueId ph = padOf(1), pw = padOf(2);
    ValueId axes0 = b.ints("axes0", {0});
    // NHWC pads as [begin x4, end x4]: end pads on H and W.
    ValueId pads8 = b.op("Concat", {b.ints("zeros4", {0, 0, 0, 0}), b.ints("zero1", {0}), b.op("Unsqueeze", {ph, axes0}),
                                    b.op("Unsqueeze", {pw, axes0}), b.ints("zero2", {0})},
                         {Attribute::makeInt("axis", 0)});
    ValueId padded = b.op("Pad", {x, pads8});
    ValueId ps = b.op("Shape", {padded});
    ValueId hp = b.op("Gather", {ps, scalarInt(b, "g1", 1)});
    ValueId wp = b.op("Gather", {ps, scalarInt(b, "g2", 2)});
    ValueId target = b.op("Concat", {b.ints("one", {1}), b.op("Unsqueeze", {b.op("Div", {hp, eight}), axes0}), b.ints("e1", {8}),
                                     b.op("Unsqueeze", {b.op("Div", {wp, eight}), axes0}), b.ints("e2", {8, 96})},
                          {Attribute::makeInt("axis", 0)});
    ValueId windows = b.op("Reshape", {padded, target});
    b.output(windows);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, ph), Strings{});
    EXPECT_EQ(dimsOf(m, padded), (Strings{"1", "h + Mod(-h, 8)", "w + Mod(-w, 8)", "96"}));
    Strings win = dimsOf(m, windows);
    ASSERT_EQ(win.size(), 6u);
    EXPECT_EQ(win[1], "floor((h + Mod(-h, 8))/8)");
    // The expressions evaluate to what the model computes.
    auto a = shape::analyzeShapes(m.graph);
    const auto& wdims = *a.of(windows).dims;
    for (int64_t h : {1, 7, 8, 13, 56, 57}) {
        Bindings bind{{"h", h}, {"w", 2 * h + 1}};
        EXPECT_EQ(wdims[1]->evaluate(bind), (h + 7) / 8) << h;
        EXPECT_EQ(wdims[3]->evaluate(bind), (2 * h + 1 + 7) / 8) << h;
        EXPECT_EQ((*a.of(padded).dims)[1]->evaluate(bind), (h + 7) / 8 * 8) << h;
    }
}

TEST(ShapeEngine, RangeOverAShapeDerivedLimitAndOverData) {
    GraphBuilder b("range");
    ValueId x = tokens(b);
    ValueId seq = b.op("Gather", {b.op("Shape", {x}), scalarInt(b, "i1", 1)});
    ValueId positions = b.op("Range", {scalarInt(b, "zero", 0), seq, scalarInt(b, "one", 1)});
    ValueId evens = b.op("Range", {scalarInt(b, "zero2", 0), seq, scalarInt(b, "two", 2)});
    ValueId limit = b.inputSymbolic("limit", DataType::Int64, {});
    ValueId free = b.op("Range", {scalarInt(b, "zero3", 0), limit, scalarInt(b, "one2", 1)});
    for (ValueId v : {positions, evens, free}) b.output(v);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, positions), Strings{"seq"});
    EXPECT_EQ(dimsOf(m, evens), Strings{"floor((seq + 1)/2)"});
    // A limit that is data: a fresh named symbol, never a number.
    EXPECT_EQ(dimsOf(m, free), Strings{"Range_n1"});
    auto a = shape::analyzeShapes(m.graph);
    ASSERT_EQ(a.fresh.size(), 1u);
    EXPECT_EQ(a.fresh[0].node, m.graph.node(m.graph.value(free).producer).displayName());
}

TEST(ShapeEngine, WhereExpandConstantOfShape) {
    // torch's x.expand(...) / repeat: Where(Equal(shape, -1), ones, shape) feeding Expand.
    GraphBuilder b("where_expand");
    ValueId x = tokens(b);
    ValueId s = b.op("Shape", {x});
    ValueId isMinus1 = b.op("Equal", {s, b.ints("m1", {-1, -1, -1})});
    ValueId ones = b.op("ConstantOfShape", {b.ints("three", {3})}, {Attribute::makeTensor("value", int64Tensor({1}, {1}))});
    ValueId target = b.op("Where", {isMinus1, ones, s});
    ValueId filled = b.op("ConstantOfShape", {target}, {Attribute::makeTensor("value", floatTensor({1}, {0.f}))});
    ValueId bias = b.input("bias", DataType::Float, {1, 1, 64});
    ValueId expanded = b.op("Expand", {bias, target});
    ValueId mask = b.op("Expand", {b.scalar("m", 1.f), b.op("Concat", {b.op("Slice", {s, b.ints("s0", {0}), b.ints("e2", {2})}), b.ints("ones2", {1, 1})}, {Attribute::makeInt("axis", 0)})});
    for (ValueId v : {filled, expanded, mask}) b.output(v);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, filled), (Strings{"batch", "seq", "64"}));
    EXPECT_EQ(dimsOf(m, expanded), (Strings{"batch", "seq", "64"}));
    EXPECT_EQ(dimsOf(m, mask), (Strings{"batch", "seq", "1", "1"}));
}

TEST(ShapeEngine, ConvAndPoolArithmeticOnSymbols) {
    GraphBuilder b("conv");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("n"), Dim::of(3), Dim::symbol("h"), Dim::symbol("w")});
    ValueId w = b.constant("w", randomFloats({8, 3, 3, 3}, 1));
    ValueId c = b.op("Conv", {x, w}, {Attribute::makeInts("pads", {1, 1, 1, 1}), Attribute::makeInts("strides", {2, 2})});
    ValueId p = b.op("MaxPool", {c}, {Attribute::makeInts("kernel_shape", {3, 3}), Attribute::makeInts("strides", {2, 2}),
                                      Attribute::makeInt("ceil_mode", 1)});
    ValueId same = b.op("Conv", {x, w}, {Attribute::makeString("auto_pad", "SAME_UPPER"), Attribute::makeInts("strides", {2, 2})});
    ValueId up = b.op("ConvTranspose", {c, b.constant("wt", randomFloats({8, 4, 2, 2}, 2))}, {Attribute::makeInts("strides", {2, 2})});
    for (ValueId v : {p, same, up}) b.output(v);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, c), (Strings{"n", "8", "floor((h - 1)/2) + 1", "floor((w - 1)/2) + 1"}));
    EXPECT_EQ(dimsOf(m, same)[2], "floor((h + 1)/2)");
    EXPECT_EQ(dimsOf(m, up)[1], "4");
    EXPECT_EQ(dimsOf(m, up)[2], "2*floor((h - 1)/2) + 2");
    auto a = shape::analyzeShapes(m.graph);
    for (int64_t h : {1, 2, 5, 224, 225}) {
        int64_t conv = (h + 2 - 3) / 2 + 1;
        int64_t pool = (conv - 3 + 1) / 2 + 1;  // ceil((conv - 3) / 2) + 1
        if (conv - 3 < 0) continue;              // the pool would reject this size
        EXPECT_EQ((*a.of(p).dims)[2]->evaluate({{"h", h}}), pool) << h;
    }
}

TEST(ShapeEngine, DataDependentSizesGetFreshSymbols) {
    GraphBuilder b("nonzero");
    ValueId x = tokens(b);
    ValueId nz = b.op("NonZero", {x});
    ValueId k = b.inputSymbolic("k", DataType::Int64, {Dim::of(1)});
    auto topk = b.opMulti("TopK", {x, k}, 2, {Attribute::makeInt("axis", -1)});
    b.output(nz);
    b.output(topk[0]);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, nz), (Strings{"3", "NonZero_n1"}));
    EXPECT_EQ(dimsOf(m, topk[0]), (Strings{"batch", "seq", "TopK_n2"}));
    auto a = shape::analyzeShapes(m.graph);
    ASSERT_EQ(a.fresh.size(), 2u);
    EXPECT_EQ(a.fresh[0].reason, "number of non-zero elements");
}

TEST(ShapeEngine, IfWithADecidedConditionTakesItsBranch) {
    // if x.shape[1] > 0 (always, for a dim): then Flatten, else Identity.
    GraphBuilder b("if");
    ValueId x = tokens(b);
    ValueId seq = b.op("Gather", {b.op("Shape", {x}), scalarInt(b, "i1", 1)});
    ValueId cond = b.op("Greater", {seq, scalarInt(b, "zero", 0)});
    auto thenG = std::make_shared<Graph>();
    thenG->name = "then";
    ValueId xin = thenG->addOuterScopeValue("x");
    ValueId flat = thenG->addValue("flat");
    thenG->addNode("Flatten", {xin}, {flat}, {Attribute::makeInt("axis", 2)});
    thenG->markOutput(flat);
    auto elseG = std::make_shared<Graph>();
    elseG->name = "else";
    ValueId xin2 = elseG->addOuterScopeValue("x");
    ValueId same = elseG->addValue("same");
    elseG->addNode("Flatten", {xin2}, {same}, {Attribute::makeInt("axis", 1)});
    elseG->markOutput(same);
    ValueId y = b.op("If", {cond}, {Attribute::makeGraph("then_branch", thenG), Attribute::makeGraph("else_branch", elseG)});
    b.output(y);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, y), (Strings{"batch*seq", "64"}));
}

TEST(ShapeEngine, SubgraphCapturesGetTheirDefinitionsTypes) {
    // r = Reshape(x, [0, -1]) is [batch, 64*seq] only by the symbolic engine; an If on a runtime
    // condition reads it in its then-branch and, two levels down, in a nested If's branch that its
    // own graph does not capture. The app draws a body's captures with these types.
    GraphBuilder b("captures");
    ValueId x = tokens(b);
    ValueId flag = b.input("flag", DataType::Bool, {});
    ValueId r = b.op("Reshape", {x, b.op("Concat", {b.ints("keep", {0}), b.ints("rest", {-1})}, {Attribute::makeInt("axis", 0)})}, {}, "r");
    ASSERT_EQ(b.graph().value(r).name, "r_out");
    auto branch = [](const std::string& name, const std::string& capture) {
        auto g = std::make_shared<Graph>();
        g->name = name;
        ValueId in = g->addOuterScopeValue(capture);
        ValueId out = g->addValue(name + "_out");
        g->addNode("Identity", {in}, {out});
        g->markOutput(out);
        return std::pair{g, in};
    };
    auto [innerThen, innerCapture] = branch("inner_then", "r_out");
    auto [innerElse, innerElseCapture] = branch("inner_else", "r_out");
    auto outerThen = std::make_shared<Graph>();
    outerThen->name = "outer_then";
    ValueId flagIn = outerThen->addOuterScopeValue("flag");
    ValueId nested = outerThen->addValue("nested");
    outerThen->addNode("If", {flagIn}, {nested}, {Attribute::makeGraph("then_branch", innerThen), Attribute::makeGraph("else_branch", innerElse)});
    outerThen->markOutput(nested);
    auto [outerElse, outerElseCapture] = branch("outer_else", "r_out");
    ValueId y = b.op("If", {flag}, {Attribute::makeGraph("then_branch", outerThen), Attribute::makeGraph("else_branch", outerElse)});
    b.output(y);
    Model m = b.finish();
    ASSERT_EQ(dimsOf(m, r), (Strings{"batch", "64*seq"}));
    auto capturedDims = [](const Graph& g, ValueId v) {
        const auto& t = g.value(v).type;
        Strings out;
        if (!t.shape) return Strings{"<rank unknown>"};
        for (const auto& d : t.shape->dims) out.push_back(d.value ? std::to_string(*d.value) : (d.param.empty() ? "?" : d.param));
        return out;
    };
    EXPECT_EQ(capturedDims(*outerElse, outerElseCapture), (Strings{"batch", "64*seq"}));
    EXPECT_EQ(capturedDims(*innerThen, innerCapture), (Strings{"batch", "64*seq"}));
    EXPECT_EQ(capturedDims(*innerElse, innerElseCapture), (Strings{"batch", "64*seq"}));
    EXPECT_EQ(outerThen->value(flagIn).type.elemType, DataType::Bool);
    // A second pass changes nothing: every capture already says what its definition says.
    EXPECT_EQ(copyCaptureTypes(m.graph), 0u);
}

TEST(ShapeEngine, OnlyInputDimNamesAreNonEmptyWhenReadFromTypes) {
    // A custom op the engine has no rule for: its outputs' dims come from their types (a file's
    // value_info, libonnx). `batch` names an input dim, so it is >= 1 and Max(1, batch) is batch;
    // unk__9 (libonnx's) and NonZero_n1 (written back by the engine) may be 0: Max(0, n - 1) stays.
    GraphBuilder b("typed");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch")});
    std::vector<ValueId> outs = b.opMulti("Opaque", {x}, 3, {}, "opaque", "custom.domain");
    b.output(outs[0]);
    b.output(outs[1]);
    b.output(outs[2]);
    Model m = b.finish();
    auto typed = [&](ValueId v, const std::string& param) {
        m.graph.value(v).type = TypeInfo::tensor(DataType::Float, Shape{{Dim::symbol(param)}});
    };
    typed(outs[0], "Max(1, batch)");
    typed(outs[1], "Max(0, unk__9 - 1)");
    typed(outs[2], "NonZero_n1");
    auto a = shape::analyzeShapes(m.graph, &m);
    auto dim0 = [&](ValueId v) { return *(*a.of(v).dims)[0]; };
    EXPECT_EQ(dim0(outs[0]).toString(), "batch");
    EXPECT_EQ(dim0(outs[1]).toString(), "Max(0, unk__9 - 1)");
    EXPECT_EQ(dim0(outs[2]).lowerBound(), std::optional<int64_t>(0));
    // The same name the engine makes up for a data-dependent size is the same symbol.
    EXPECT_EQ(dim0(outs[2]), DimExpr::symbol("NonZero_n1", 0));
}

TEST(ShapeEngine, KeepsWhatOnnxInferenceKnowsAndCountsCoverage) {
    GraphBuilder b("static");
    ValueId x = b.input("x", DataType::Float, {2, 3, 8, 8});
    ValueId y = b.op("Relu", {b.op("Conv", {x, b.constant("w", randomFloats({4, 3, 3, 3}, 1))})});
    b.output(y);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, y), (Strings{"2", "4", "6", "6"}));
    auto cov = shape::shapeCoverage(m.graph);
    EXPECT_EQ(cov.total, 3u);
    EXPECT_EQ(cov.known, 3u);
    auto a = shape::analyzeShapes(m.graph);
    EXPECT_TRUE(a.conflicts.empty());
    // Refining twice changes nothing.
    EXPECT_EQ(shape::refineValueTypes(m.graph, a), 0u);
}

TEST(ShapeEngine, TorchPadsThroughReshapeFlipTranspose) {
    // F.pad(x, (0, 0, 0, pw, 0, ph)) at opset 17: the pads are reshaped to [4, 2], flipped,
    // transposed and flattened before Pad reads them.
    GraphBuilder b("torch_pad");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::of(1), Dim::symbol("h"), Dim::symbol("w"), Dim::of(96)});
    ValueId s = b.op("Shape", {x});
    ValueId seven = scalarInt(b, "seven", 7);
    auto padOf = [&](int64_t axis) {
        ValueId d = b.op("Gather", {s, scalarInt(b, "axis" + std::to_string(axis), axis)});
        return b.op("Unsqueeze", {b.op("Mod", {b.op("Sub", {seven, b.op("Mod", {d, seven})}), seven}), b.ints("a" + std::to_string(axis), {0})});
    };
    ValueId pads6 = b.op("Concat", {b.ints("z3", {0, 0, 0}), padOf(2), b.ints("z1", {0}), padOf(1)}, {Attribute::makeInt("axis", 0)});
    ValueId pads8 = b.op("Concat", {pads6, b.ints("z2", {0, 0})}, {Attribute::makeInt("axis", 0)});
    ValueId pairs = b.op("Reshape", {pads8, b.ints("pairs", {-1, 2})});
    ValueId flipped = b.op("Slice", {pairs, b.ints("st", {-1}), b.ints("en", {-9223372036854775807}), b.ints("ax", {0}), b.ints("sp", {-1})});
    ValueId flat = b.op("Reshape", {b.op("Transpose", {flipped}, {Attribute::makeInts("perm", {1, 0})}), b.ints("flat", {-1})});
    ValueId padded = b.op("Pad", {x, b.op("Cast", {flat}, {Attribute::makeInt("to", 7)})});
    b.output(padded);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, padded), (Strings{"1", "h + Mod(-h, 7)", "w + Mod(-w, 7)", "96"}));
}

TEST(ShapeEngine, SliceToASymbolicEndUndoesPadding) {
    // x[:, :H, :W, :] after padding: the end is the unpadded size, a symbol.
    GraphBuilder b("unpad");
    ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::of(1), Dim::symbol("h"), Dim::of(96)});
    ValueId h = b.op("Unsqueeze", {b.op("Gather", {b.op("Shape", {x}), scalarInt(b, "i1", 1)}), b.ints("a0", {0})});
    ValueId padded = b.op("Pad", {x, b.ints("pads", {0, 0, 0, 0, 5, 0})});
    ValueId back = b.op("Slice", {padded, b.ints("zero", {0}), h, b.ints("axis", {1}), b.ints("one", {1})});
    b.output(back);
    Model m = b.finish();
    EXPECT_EQ(dimsOf(m, padded), (Strings{"1", "h + 5", "96"}));
    EXPECT_EQ(dimsOf(m, back), (Strings{"1", "h", "96"}));
}

TEST(ShapeEngine, TorchvisionResizeArithmeticInFloat32GivesTheRealSizes) {
    // GeneralizedRCNNTransform: scale = min(100 / min(h, w), 150 / max(h, w)), sizes =
    // floor(h * scale), floor(w * scale), computed in float32 from Shape and fed to Resize.
    GraphBuilder b("resize_sizes");
    ValueId x = b.input("x", DataType::Float, {1, 3, 64, 47});
    ValueId hw = b.op("Slice", {b.op("Shape", {x}), b.ints("s2", {2}), b.ints("s4", {4})});
    auto asFloat = [&](ValueId v) { return b.op("Cast", {v}, {Attribute::makeInt("to", int64_t(DataType::Float))}); };
    ValueId lo = asFloat(b.op("ReduceMin", {hw}, {Attribute::makeInt("keepdims", 0)}));
    ValueId hi = asFloat(b.op("ReduceMax", {hw}, {Attribute::makeInt("keepdims", 0)}));
    ValueId scale = b.op("Min", {b.op("Mul", {b.op("Reciprocal", {lo}), b.scalar("c100", 100.f)}),
                                 b.op("Mul", {b.op("Reciprocal", {hi}), b.scalar("c150", 150.f)})});
    auto sized = [&](int64_t axis) {
        ValueId d = asFloat(b.op("Gather", {hw, scalarInt(b, "ax" + std::to_string(axis), axis)}));
        ValueId f = b.op("Floor", {b.op("Mul", {d, scale})});
        return b.op("Unsqueeze", {f, b.ints("u" + std::to_string(axis), {0})});
    };
    ValueId hwNew = b.op("Cast", {b.op("Concat", {sized(0), sized(1)}, {Attribute::makeInt("axis", 0)})},
                         {Attribute::makeInt("to", int64_t(DataType::Int64))});
    ValueId sizes = b.op("Concat", {b.ints("nc", {1, 3}), hwNew}, {Attribute::makeInt("axis", 0)});
    ValueId y = b.op("Resize", {x, b.constant("roi", makeTensorOf<float>(DataType::Float, {0}, {})),
                                b.constant("scales", makeTensorOf<float>(DataType::Float, {0}, {})), sizes});
    b.output(y);
    Model m = b.finish();
    auto real = eval::run(m, eval::randomInputs(m, 1));
    std::vector<std::string> want;
    for (int64_t d : real[0]->dims) want.push_back(std::to_string(d));
    EXPECT_EQ(dimsOf(m, y), want);
    EXPECT_EQ(want[2], "136");  // floor(64 * 100/47); the width's 47 * 100/47 is the float32 edge case
}

TEST(ShapeEngine, UnsqueezeWithARepeatedAxisIsRefusedNotReadPastTheShape) {
    // Found by the memplan fuzzer: axes [0, 0] marked one axis twice, so the rule read one dim
    // past the input's shape. A repeated axis is invalid ONNX: the output stays unknown, with why.
    GraphBuilder b("unsqueeze_repeat");
    ValueId x = tokens(b);
    ValueId y = b.op("Unsqueeze", {x, b.ints("axes", {0, 0})});
    b.output(y);
    auto a = shape::analyzeShapes(b.graph());  // no finish(): ONNX inference would refuse it first
    EXPECT_FALSE(a.of(y).dims);
    EXPECT_NE(a.of(y).why.find("repeat"), std::string::npos) << a.of(y).why;
}

TEST(ShapeEngine, EachCallOfAFunctionGetsItsOwnDataDependentSizes) {
    // Picks(x) = NonZero(x), called on two inputs and next to a top-level NonZero: three
    // unrelated counts. A body's fresh names restarting at _n1 made them one symbol, "proving"
    // the counts equal.
    GraphBuilder b("calls");
    auto a = b.input("a", DataType::Float, {6});
    auto c = b.input("c", DataType::Float, {6});
    ValueId top = b.op("NonZero", {a}, {}, "top");
    ValueId first = b.op("Picks", {a}, {}, "first", "local");
    ValueId second = b.op("Picks", {c}, {}, "second", "local");
    for (ValueId v : {top, first, second}) b.output(v);
    Model m = b.model();
    m.setOpset("local", 1);
    Function f;
    f.name = "Picks";
    f.domain = "local";
    f.opsetImports = {{"", 17}};
    f.body = std::make_shared<Graph>();
    ValueId in = f.body->addValue("x");
    f.body->setInputs({in});
    ValueId o = f.body->addValue("o");
    f.body->addNode("NonZero", {in}, {o});
    f.body->markOutput(o);
    m.functions.push_back(f);
    auto an = shape::analyzeShapes(m.graph, &m);
    std::vector<std::string> counts;
    for (ValueId v : {top, first, second}) {
        const auto& d = an.of(v).dims;
        ASSERT_TRUE(d && d->size() == 2 && (*d)[1]) << m.graph.value(v).name;
        counts.push_back((*d)[1]->toString());
    }
    EXPECT_NE(counts[0], counts[1]);
    EXPECT_NE(counts[0], counts[2]);
    EXPECT_NE(counts[1], counts[2]);
    EXPECT_EQ(an.fresh.size(), 3u);
}

TEST(ShapeEngine, FreshNamesNeverTakeANameTheTypesAlreadyUse) {
    // Types written by an earlier analysis keep their names after a pass removed a node and the
    // numbering moved: a value the engine cannot compute (here a custom op's output) still says
    // NonZero_n1. A new NonZero must not become NonZero_n1 too (two unrelated counts "equal"),
    // and a NonZero whose output already names its own size keeps that name (types stay stable).
    GraphBuilder b("stale_names");
    auto x = b.input("x", DataType::Float, {6});
    auto y = b.input("y", DataType::Float, {6});
    ValueId first = b.op("NonZero", {x}, {}, "first");
    ValueId second = b.op("NonZero", {y}, {}, "second");
    ValueId stale = b.op("Foo", {x}, {}, "foo", "custom");
    for (ValueId v : {first, second, stale}) b.output(v);
    Graph& g = b.graph();
    g.value(second).type = TypeInfo::tensor(DataType::Int64, Shape{{Dim::of(1), Dim::symbol("NonZero_n7")}});
    g.value(stale).type = TypeInfo::tensor(DataType::Float, Shape{{Dim::symbol("NonZero_n1")}});
    auto a = shape::analyzeShapes(g);
    ASSERT_TRUE(a.of(first).dims && (*a.of(first).dims)[1]);
    ASSERT_TRUE(a.of(second).dims && (*a.of(second).dims)[1]);
    EXPECT_NE((*a.of(first).dims)[1]->toString(), "NonZero_n1");
    EXPECT_NE((*a.of(first).dims)[1]->toString(), "NonZero_n7");
    EXPECT_EQ((*a.of(second).dims)[1]->toString(), "NonZero_n7");
    EXPECT_EQ(a.fresh.size(), 2u);
}
