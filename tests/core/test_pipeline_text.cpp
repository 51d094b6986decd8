// The textual pipeline syntax (core/pipeline/PipelineText.h): levels expand to the table, options
// are checked against what each pass declares, and every mistake is BadInput naming it.
#include <gtest/gtest.h>

#include "examples/Builder.h"
#include "ir/Error.h"
#include "passes/PassManager.h"
#include "passes/layout/LayoutPasses.h"
#include "pipeline/PipelineBuilder.h"
#include "pipeline/PipelineText.h"

using namespace passlens;
using namespace passlens::passes;

namespace {

std::string badInput(const std::string& text) {
    try {
        parsePipeline(text);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "'" << text << "' parsed";
    return {};
}

std::vector<std::string> passNames(const std::vector<PipelineElement>& elements) {
    std::vector<std::string> out;
    for (const auto& e : elements) out.push_back(e.pass);
    return out;
}

}  // namespace

TEST(PipelineText, LevelsExpandToTheirTableAndOptionsAttachToTheirPass) {
    const auto elements = parsePipeline("basic, layout{to=NHWC},transpose,version-convert{opset=18}");
    auto expected = PassRegistry::global().pipeline(Level::Basic);
    for (const char* p : {"layout", "transpose", "version-convert"}) expected.push_back(p);
    EXPECT_EQ(passNames(elements), expected);
    EXPECT_EQ(pipelineText(std::vector<PipelineElement>(elements.end() - 3, elements.end())),
              "layout{to=NHWC},transpose,version-convert{opset=18}");
    EXPECT_TRUE(parsePipeline("none").empty());
    EXPECT_TRUE(parsePipeline(" ").empty());  // no passes, as --passes "" always meant
}

TEST(PipelineText, ColonIsTheOneOptionShorthandAndBracesTakeSeveral) {
    EXPECT_EQ(pipelineText(parsePipeline("layout:NCHW,version-convert:17")), "layout{to=NCHW},version-convert{opset=17}");
    // Option values may hold commas (a list) and '=' (a budget); options are separated by spaces.
    EXPECT_EQ(pipelineText(parsePipeline("autodiff{loss=none wrt=x,w},recompute{strategy=budget=4096}")),
              "autodiff{loss=none wrt=x,w},recompute{strategy=budget=4096}");
}

TEST(PipelineText, MistakesAreBadInputNamingThem) {
    EXPECT_NE(badInput("basic,bogus").find("unknown pass 'bogus'; valid passes: shape-chain-folding"), std::string::npos);
    EXPECT_NE(badInput("layout{to=NCWH}").find("layout{to=...}: 'NCWH' is not one of NHWC, NCHW"), std::string::npos);
    EXPECT_NE(badInput("layout{layout=NHWC}").find("pass 'layout' has no option 'layout'; its options: to"), std::string::npos);
    EXPECT_NE(badInput("dce{x=1}").find("pass 'dce' has no option 'x'; it takes none"), std::string::npos);
    EXPECT_NE(badInput("version-convert{opset=abc}").find("expected an integer, got 'abc'"), std::string::npos);
    EXPECT_NE(badInput("version-convert:0").find("the opset must be 1 or more"), std::string::npos);
    EXPECT_NE(badInput("recompute{strategy=half}").find("half"), std::string::npos);
    EXPECT_NE(badInput("layout{to=NHWC").find("missing '}'"), std::string::npos);
    EXPECT_NE(badInput("layout}").find("'}' without '{'"), std::string::npos);
    EXPECT_NE(badInput("dce,,cse").find("empty element"), std::string::npos);
    EXPECT_NE(badInput("layout{to}").find("expected name=value, got 'to'"), std::string::npos);
    EXPECT_NE(badInput("dce:1").find("needs a pass with one option; dce has 0"), std::string::npos);
    EXPECT_NE(badInput("basic{x=1}").find("a level takes no options"), std::string::npos);
}

// A step's options hold for that step only: two layout steps convert there and back.
TEST(PipelineText, OptionsHoldForTheirStepOnly) {
    ir::GraphBuilder b("conv", 13);
    auto x = b.input("x", ir::DataType::Float, {1, 3, 8, 8});
    b.output(b.op("Conv", {x, b.constant("w", ir::randomFloats({4, 3, 3, 3}, 1))}, {}, "conv"));
    ir::Model m = b.finish();
    PassManager pm;
    addPipeline(pm, "layout{to=NHWC},layout{to=NCHW}");
    ASSERT_EQ(pm.args().size(), 2u);
    PipelineOptions po;
    po.keepSnapshots = false;
    const auto r = pm.run(m, po);
    ASSERT_EQ(r.steps.size(), 2u);
    EXPECT_TRUE(r.steps[0].result.changed);
    EXPECT_TRUE(r.steps[1].result.changed);
    EXPECT_TRUE(nonStandardDomains(m).empty()) << "the second step did not convert back";
}

TEST(PipelineBuilder, PipelineDoesNotCombineWithLevelPassesOrTheOrtProfile) {
    for (auto set : {+[](PipelineRequest& r) { r.level = "all"; }, +[](PipelineRequest& r) { r.passes = "dce"; },
                     +[](PipelineRequest& r) { r.profile = "onnxruntime"; }}) {
        PipelineRequest r;
        r.pipeline = "basic";
        set(r);
        PassManager pm;
        PassOptions o;
        EXPECT_THROW(buildPipeline(r, pm, o), Error);
    }
    PipelineRequest r;
    r.pipeline = "dce";
    r.targetLayout = "NHWC";
    r.groupFunctions = true;
    PassManager pm;
    PassOptions o;
    buildPipeline(r, pm, o);
    std::vector<std::string> names;
    for (const auto& p : pm.passes()) names.push_back(p->name());
    EXPECT_EQ(names, (std::vector<std::string>{"dce", "layout", "transpose", "group-functions"}));
    EXPECT_EQ(o.targetLayout, "NHWC");
}
