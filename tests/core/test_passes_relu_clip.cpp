// relu-clip / clip-relu (algebraic, level basic): Relu and Clip merge into one Clip with
// min max(lo, 0); refused when the bounds are empty or below 0, or when the middle value has
// another reader. Attribute form (opset < 11) and input form (opset >= 11).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

using test::opCounts;
using test::remarkText;

struct ReluClipOptions {
    bool reluFirst = true;
    float lo = -1.f, hi = 6.f;
    int64_t opset = 17;
    bool tap = false;  ///< the middle value is also a graph output
};

Model reluClip(const ReluClipOptions& o) {
    GraphBuilder b("relu_clip", o.opset);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto clip = [&](ValueId in) {
        if (o.opset < 11) return b.op("Clip", {in}, {Attribute::makeFloat("min", o.lo), Attribute::makeFloat("max", o.hi)}, "clip");
        return b.op("Clip", {in, b.scalar("lo", o.lo), b.scalar("hi", o.hi)}, {}, "clip");
    };
    ValueId mid = o.reluFirst ? b.op("Relu", {x}, {}, "relu") : clip(x);
    ValueId out = o.reluFirst ? clip(mid) : b.op("Relu", {mid}, {}, "relu");
    b.output(out);
    if (o.tap) b.output(b.op("Neg", {mid}, {}, "tap"));
    return b.finish();
}

test::CheckOptions wideInputs() {
    test::CheckOptions c;
    c.adjustInputs = [](std::vector<TensorPtr> in) {
        std::vector<float> v(16);
        for (size_t i = 0; i < v.size(); ++i) v[i] = -9.f + 1.2f * (float)i;  // below lo, between, above hi
        in[0] = makeTensorOf<float>(DataType::Float, {2, 8}, v);
        return in;
    };
    return c;
}

}  // namespace

TEST(ReluClipMerge, BothOrdersAndBothOpsetFormsBecomeOneClip) {
    for (ReluClipOptions o : {ReluClipOptions{}, ReluClipOptions{.reluFirst = false}, ReluClipOptions{.opset = 9},
                              ReluClipOptions{.reluFirst = false, .lo = 2.f, .opset = 9}}) {
        Model m = reluClip(o);
        auto run = test::runChecked(m, "algebraic", wideInputs());
        EXPECT_EQ(run.after, (std::map<std::string, int>{{"Clip", 1}})) << o.reluFirst << " opset " << o.opset;
        const std::string applied = remarkText(run.result, RemarkKind::Applied);
        EXPECT_NE(applied.find("Relu and Clip merge into one Clip with min " + std::to_string(std::max(o.lo, 0.f))), std::string::npos)
            << applied;
    }
}

TEST(ReluClipMerge, NegativeUpperBoundIsRefused) {
    Model m = reluClip({.lo = -5.f, .hi = -1.f});
    auto run = test::runChecked(m, "algebraic", wideInputs());
    EXPECT_EQ(run.after, run.before);
    EXPECT_NE(remarkText(run.result, RemarkKind::Missed).find("are empty or below 0"), std::string::npos)
        << remarkText(run.result, RemarkKind::Missed);
}

TEST(ReluClipMerge, SecondReaderOfTheMiddleValueIsRefused) {
    Model m = reluClip({.tap = true});
    auto run = test::runChecked(m, "algebraic", wideInputs());
    EXPECT_EQ(run.after["Clip"], 1);
    EXPECT_EQ(run.after["Relu"], 1);
    EXPECT_NE(remarkText(run.result, RemarkKind::Missed).find("relu → clip not merged: 'relu_out' has other readers"), std::string::npos)
        << remarkText(run.result, RemarkKind::Missed);
}
