// ShapeCodegen alone: expressions → nodes → evaluated by the interpreter at several bindings
// equal the expressions; node counts are what cost() promised and what vectorising buys.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"
#include "passes/ShapeCodegen.h"

using namespace passlens;
using namespace passlens::ir;
using shape::DimExpr;

namespace {

DimExpr sym(const char* n) { return DimExpr::symbol(n); }
DimExpr k(int64_t v) { return DimExpr::constant(v); }

struct Program {
    std::vector<shape::DimExpr> elements;
    bool scalar = false;
};

/// x: float [batch, h, w, 16] is the only source. Emits every program as a graph output, checks
/// cost() against the nodes added, and the outputs against the expressions at each binding.
/// Returns the nodes added; `opset` picks Shape slices (>= 15) or Shape + Gather.
size_t emitAndCheck(const std::vector<Program>& programs, int64_t opset = 17) {
    GraphBuilder b("codegen", opset);
    const ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("batch"), Dim::symbol("h"), Dim::symbol("w"), Dim::of(16)});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    std::vector<passes::Change> changes;
    std::vector<passes::Remark> remarks;
    passes::Rewriter rw(m, m.graph, "test", "", changes, remarks);
    passes::ShapeCodegen cg(opset);
    cg.addSource(x, -1, {sym("batch"), sym("h"), sym("w"), k(16)});
    std::vector<passes::ShapeCodegen::Request> requests;
    for (const Program& p : programs) requests.push_back({p.elements, p.scalar, INT64_MAX, {}});
    const auto promised = cg.cost(requests);
    EXPECT_TRUE(promised.has_value());
    if (!promised) return 0;
    const size_t before = m.graph.nodeOrder().size();
    std::vector<ValueId> outputs = m.graph.outputs();
    for (const auto& r : requests) {
        const ValueId v = cg.emit(rw, r, "p", "test");
        EXPECT_NE(v, kNone);
        if (v == kNone) return 0;
        outputs.push_back(v);
    }
    rw.setGraphOutputs(outputs, "test");
    const size_t added = m.graph.nodeOrder().size() - before;
    EXPECT_EQ(added, *promised) << "cost() and emit() disagree";
    const auto checker = onnxio::checkModel(m);
    EXPECT_FALSE(checker.has_value()) << checker.value_or("");
    for (const test::DimBindings& binding : {test::DimBindings{{"batch", 1}, {"h", 1}, {"w", 7}},
                                             test::DimBindings{{"batch", 3}, {"h", 10}, {"w", 13}},
                                             test::DimBindings{{"batch", 2}, {"h", 33}, {"w", 4}}}) {
        shape::Bindings at;
        for (const auto& [name, value] : binding) at[name] = value;
        const auto got = eval::run(m, eval::randomInputs(m, 1, binding));
        for (size_t i = 0; i < programs.size(); ++i) {
            const Tensor& t = *got.at(i + 1);
            EXPECT_EQ(t.dims.size(), programs[i].scalar ? 0u : 1u);
            EXPECT_EQ((size_t)t.elementCount(), programs[i].elements.size());
            if ((size_t)t.elementCount() != programs[i].elements.size()) continue;
            for (size_t j = 0; j < programs[i].elements.size(); ++j)
                EXPECT_EQ(t.as<int64_t>()[j], programs[i].elements[j].evaluate(at).value())
                    << programs[i].elements[j].toString() << " at h=" << at["h"] << " w=" << at["w"];
        }
    }
    return added;
}

}  // namespace

TEST(ShapeCodegen, PadsOfTwoDimsAreOneNegAndOneModOverOneShapeSlice) {
    const DimExpr h = sym("h"), w = sym("w");
    // Swin's window padding: [0, 0, 0, 0, 0, Mod(-h, 4), Mod(-w, 4), 0].
    const Program pads{{k(0), k(0), k(0), k(0), k(0), mod(-h, k(4)), mod(-w, k(4)), k(0)}};
    EXPECT_EQ(emitAndCheck({pads}), 4u);  // Shape(x, 1, 3), Neg, Mod, Concat
}

TEST(ShapeCodegen, ConsecutiveDimsAndConstantsOfOneValueAreOneShape) {
    EXPECT_EQ(emitAndCheck({{{sym("batch"), sym("h"), sym("w"), k(16)}}}), 1u);
    EXPECT_EQ(emitAndCheck({{{sym("h"), sym("w")}}}), 1u);
    // Out of order: one slice and a Gather.
    EXPECT_EQ(emitAndCheck({{{sym("w"), sym("h")}}}), 2u);
    // Before opset 15 a slice is Shape + Gather.
    EXPECT_EQ(emitAndCheck({{{sym("h"), sym("w")}}}, 14), 2u);
}

TEST(ShapeCodegen, WindowCountsShareTheirVectorAcrossRequests) {
    const DimExpr ph = sym("h") + mod(-sym("h"), k(4)), pw = sym("w") + mod(-sym("w"), k(4));
    const DimExpr nh = floorDiv(ph, k(4)), nw = floorDiv(pw, k(4));
    // [batch, nh, 4, nw, 4, 16] and [nh, 4, nw, 4] and the scalar nh*nw, as torchvision's Swin.
    const size_t added = emitAndCheck({{{sym("batch"), nh, k(4), nw, k(4), k(16)}}, {{nh, k(4), nw, k(4)}}, {{nh * nw}, true}});
    EXPECT_LE(added, 12u);
}

TEST(ShapeCodegen, IntegerSemanticsOfDivAndMod) {
    const DimExpr h = sym("h"), w = sym("w");
    // floor((h - 1)/4) + 1 is built (h - 1 >= 0); floor((1 - h)/2) is not (Div truncates).
    EXPECT_GT(emitAndCheck({{{floorDiv(h - k(1), k(4)) + k(1)}}}), 0u);
    EXPECT_GT(emitAndCheck({{{mod(k(5) - h * w, k(7)), mod(h, k(-3))}}}), 0u);
    GraphBuilder b("refuse");
    const ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h")});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    passes::ShapeCodegen cg(17);
    cg.addSource(x, -1, {sym("h")});
    EXPECT_FALSE(cg.cost({{{floorDiv(k(1) - h, k(2))}, false, INT64_MAX, {}}}).has_value());
    // A symbol no source has cannot be read.
    EXPECT_FALSE(cg.cost({{{sym("other")}, false, INT64_MAX, {}}}).has_value());
    // A source after the reader cannot be read either.
    passes::ShapeCodegen late(17);
    late.addSource(x, 5, {sym("h")});
    EXPECT_FALSE(late.cost({{{h}, false, 5, {}}}).has_value());
    EXPECT_TRUE(late.cost({{{h}, false, 6, {}}}).has_value());
}

TEST(ShapeCodegen, MixedFormsMinMaxProductsAndScalars) {
    const DimExpr b = sym("batch"), h = sym("h"), w = sym("w");
    emitAndCheck({{{b * h * w, min(h, w), max(h - k(2), k(0)) + k(1), k(3) * h - w, k(7) - h}},
                  {{min(h, w)}, true},
                  {{b * k(4)}, true},
                  {{h}, true},
                  {{w * w - h}}});
}

TEST(ShapeCodegen, FloorOfANegativeNumeratorTimesItsDivisorIsBuiltAsMod) {
    const DimExpr h = sym("h"), w = sym("w");
    // A float size rounded up to a multiple of 32 minus the size: -h - 32*floor(-h/32) = Mod(-h, 32).
    const DimExpr padH = -h - k(32) * floorDiv(-h, k(32)), padW = -w - k(32) * floorDiv(-w, k(32));
    ASSERT_FALSE(shape::atomOf(padH).has_value()) << padH.toString();  // not already a Mod atom
    EXPECT_EQ(emitAndCheck({{{k(0), k(0), k(0), k(0), padH, padW}}}), 4u);  // Shape(x, 1, 3), Neg, Mod, Concat
    // The padded size 32*ceil(h/32) = h + Mod(-h, 32); with a negative divisor too.
    EXPECT_GT(emitAndCheck({{{k(-32) * floorDiv(-h, k(32)), k(6) * floorDiv(k(1) - w, k(-3))}}}), 0u);
    // A coefficient that is not a multiple of the divisor has no exact Mod form: refused.
    GraphBuilder b("refuse");
    const ValueId x = b.inputSymbolic("x", DataType::Float, {Dim::symbol("h")});
    b.output(b.op("Relu", {x}));
    Model m = b.finish();
    passes::ShapeCodegen cg(17);
    cg.addSource(x, -1, {h});
    EXPECT_FALSE(cg.cost({{{k(-16) * floorDiv(-h, k(32))}, false, INT64_MAX, {}}}).has_value());
    EXPECT_TRUE(cg.cost({{{k(-32) * floorDiv(-h, k(32))}, false, INT64_MAX, {}}}).has_value());
}
