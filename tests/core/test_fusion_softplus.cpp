// Softplus fusion: Log(Exp(x) + 1) (either operand order) → Softplus, and the refusals (a second
// reader, a constant other than 1), with op counts, remark text and numerical equivalence.
#include <gtest/gtest.h>

#include "PassTestSupport.h"
#include "examples/Builder.h"

using namespace passlens;
using namespace passlens::ir;
using namespace passlens::passes;

namespace {

Model softplus(bool oneFirst, float one = 1.f, bool tap = false) {
    GraphBuilder b("softplus", 13);
    auto x = b.input("x", DataType::Float, {2, 8});
    auto e = b.op("Exp", {x}, {}, "exp");
    auto c = b.scalar("one", one);
    b.output(b.op("Log", {b.op("Add", {oneFirst ? c : e, oneFirst ? e : c}, {}, "add")}, {}, "log"));
    if (tap) b.output(b.op("Neg", {e}, {}, "tap"));
    return b.finish();
}

}  // namespace

TEST(FusionSoftplus, BothOperandOrdersFuse) {
    for (bool oneFirst : {false, true}) {
        Model m = softplus(oneFirst);
        const auto r = test::runChecked(m, "fuse-softplus", test::fusionCheckOptions(3));
        EXPECT_EQ(r.after, (std::map<std::string, int>{{"Softplus", 1}})) << oneFirst;
        EXPECT_NE(test::remarkText(r.result, RemarkKind::Applied).find("Softplus form at log: 3 nodes fused into Softplus"),
                  std::string::npos);
        EXPECT_TRUE(m.graph.initializerOrder().empty()) << "the constant 1 stayed";
    }
}

TEST(FusionSoftplus, SecondReaderIsMissedNamingIt) {
    Model m = softplus(false, 1.f, true);
    const auto r = test::runChecked(m, "fuse-softplus", test::fusionCheckOptions(3));
    EXPECT_EQ(r.after, r.before);
    EXPECT_NE(test::remarkText(r.result, RemarkKind::Missed).find("not fused: 'exp_out' has 2 readers"), std::string::npos)
        << test::remarkText(r.result, RemarkKind::Missed);
}

TEST(FusionSoftplus, OtherConstantIsNotAMatch) {
    Model m = softplus(false, 2.f);
    const auto r = test::runChecked(m, "fuse-softplus", test::fusionCheckOptions(3));
    EXPECT_EQ(r.after, r.before);
    EXPECT_TRUE(r.result.remarks.empty());
}
