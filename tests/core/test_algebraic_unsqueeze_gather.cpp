// unsqueeze-into-gather: Unsqueezes at axis a over a cone of elementwise ops whose leaves are
// Gathers of a scalar index on axis a go; the Gathers take [k]. Each case checks the op counts,
// the outputs under the interpreter at several bindings (exact), the ONNX checker and a second run
// that changes nothing (runCheckedAtBindings); the refusals keep every Unsqueeze.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;

namespace {

const std::vector<test::DimBindings> kSizes = {{{"n", 1}}, {{"n", 4}}, {{"n", 9}}};

passes::PipelineResult runAlgebraic(Model& m) { return test::runCheckedAtBindings(m, {"algebraic", "dce"}, kSizes); }

bool applied(const passes::PipelineResult& r, const std::string& rule) { return test::appliedInPipeline(r, rule); }

struct DecodeOptions {
    int64_t gatherAxis = 1;
    int64_t widthAxis = 1, centreAxis = 1;  ///< the Unsqueezes' axes
    bool widthReadByReduce = false;         ///< a ReduceSum reads the width too
    bool offsetInput = false;               ///< the centre adds an input of the width's rank
};

/// torchvision's BoxCoder on boxes [n, 4]: widths = b[:, 2] - b[:, 0], centres = b[:, 0] + 0.5 *
/// widths, then `d * widths[:, None] + centres[:, None]` with d [n, 1]. With gatherAxis 0 the
/// boxes are [4, n] and the columns rows.
Model decode(const DecodeOptions& o) {
    GraphBuilder b("decode");
    const std::vector<Dim> boxDims = o.gatherAxis == 1 ? std::vector<Dim>{Dim::symbol("n"), Dim::of(4)}
                                                       : std::vector<Dim>{Dim::of(4), Dim::symbol("n")};
    ValueId boxes = b.inputSymbolic("boxes", DataType::Float, boxDims);
    auto column = [&](const std::string& name, int64_t k) {
        return b.op("Gather", {boxes, b.constant(name, makeTensorOf<int64_t>(DataType::Int64, {}, {k}))},
                    {Attribute::makeInt("axis", o.gatherAxis)});
    };
    ValueId x0 = column("k0", 0);
    ValueId width = b.op("Sub", {column("k2", 2), x0});
    ValueId centre = b.op("Add", {x0, b.op("Mul", {width, b.scalar("half", 0.5f)})});
    if (o.offsetInput) centre = b.op("Add", {centre, b.inputSymbolic("offset", DataType::Float, {Dim::symbol("n")})});
    const std::vector<Dim> deltaDims = o.widthAxis == 1 ? std::vector<Dim>{Dim::symbol("n"), Dim::of(1)}
                                                        : std::vector<Dim>{Dim::of(1), Dim::symbol("n")};
    ValueId d = b.inputSymbolic("d", DataType::Float, deltaDims);
    ValueId w1 = b.op("Unsqueeze", {width, b.ints("wa", {o.widthAxis})});
    ValueId c1 = b.op("Unsqueeze", {centre, b.ints("ca", {o.centreAxis})});
    b.output(b.op("Add", {b.op("Mul", {d, w1}), c1}));
    if (o.widthReadByReduce) b.output(b.op("ReduceSum", {width}, {Attribute::makeInt("keepdims", 0)}));
    return b.finish();
}

}  // namespace

TEST(UnsqueezeIntoGather, BoxDecodeKeepsTheGatheredAxis) {
    for (int64_t axis : {1, 0}) {
        DecodeOptions o;
        o.gatherAxis = o.widthAxis = o.centreAxis = axis;
        Model m = decode(o);
        auto r = runAlgebraic(m);
        EXPECT_TRUE(applied(r, "unsqueeze-into-gather")) << axis;
        auto c = test::opCounts(m.graph);
        EXPECT_EQ(c.count("Unsqueeze"), 0u) << axis;
        EXPECT_EQ(c["Gather"], 2) << axis;
        EXPECT_EQ(c["Sub"], 1) << axis;
        for (NodeId id : m.graph.nodeOrder()) {
            const Node& n = m.graph.node(id);
            if (n.opType != "Gather") continue;
            EXPECT_EQ(m.graph.value(n.inputs[1]).initializer->dims, (std::vector<int64_t>{1})) << "[k] indices";
            EXPECT_EQ(m.graph.value(n.outputs[0]).rank(), size_t(2));
        }
    }
}

TEST(UnsqueezeIntoGather, RefusedWhenTheConeLeaksOrTheAxesDiffer) {
    struct Case {
        const char* why;
        DecodeOptions o;
    };
    std::vector<Case> cases(4);
    cases[0].why = "a ReduceSum reads the width";
    cases[0].o.widthReadByReduce = true;
    cases[1].why = "an Unsqueeze at another axis than the Gathers'";
    cases[1].o.widthAxis = cases[1].o.centreAxis = 0;
    cases[2].why = "the two Unsqueezes at different axes";
    cases[2].o.widthAxis = 0;
    cases[3].why = "an operand that is neither a Gather nor one element";
    cases[3].o.offsetInput = true;
    for (const Case& k : cases) {
        Model m = decode(k.o);
        const auto before = test::opCounts(m.graph);
        auto r = runAlgebraic(m);
        EXPECT_FALSE(applied(r, "unsqueeze-into-gather")) << k.why;
        EXPECT_EQ(test::opCounts(m.graph)["Unsqueeze"], before.at("Unsqueeze")) << k.why;
    }
}
