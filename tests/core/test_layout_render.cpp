// passlens-cli render: svg/png/dot through Graphviz's own renderers; bad requests exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestSupport.h"
#include "examples/Examples.h"
#include "onnx/Export.h"

using namespace passlens;

TEST(LayoutRender, CliWritesSvgPngAndDot) {
    const std::string dir = test::tempDir("render");
    const std::string model = dir + "/conv_bn_relu.onnx";
    onnxio::exportModelFile(examples::find("conv_bn_relu")->build(), model);
    for (std::string ext : {"svg", "png", "dot"}) {
        const std::string out = dir + "/g." + ext;
        auto r = test::runCli({"render", model, "-o", out});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        ASSERT_TRUE(std::filesystem::exists(out));
        std::ifstream f(out, std::ios::binary);
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        if (ext == "png") EXPECT_EQ(text.substr(1, 3), "PNG");
        else {
            EXPECT_NE(text.find("Conv"), std::string::npos);
            EXPECT_NE(text.find("W ⟨8×3×3×3⟩"), std::string::npos);  // folded weight line
        }
    }
}

TEST(LayoutRender, AfterPassDrawsTheSnapshot) {
    // The cleanup example has a Constant node and dead work: after DCE the drawing has fewer boxes.
    const std::string dir = test::tempDir("render_after");
    const std::string model = dir + "/m.onnx";
    onnxio::exportModelFile(examples::find("cleanup_opportunities")->build(), model);
    auto before = test::runCli({"render", model, "-o", dir + "/a.dot", "--no-fold"});
    auto after = test::runCli({"render", model, "-o", dir + "/b.dot", "--no-fold", "--after", "dce"});
    ASSERT_EQ(before.exitCode, 0) << before.err;
    ASSERT_EQ(after.exitCode, 0) << after.err;
    auto boxes = [](const std::string& out) { return std::stoi(out.substr(out.find('(') + 1)); };
    EXPECT_LT(boxes(after.out), boxes(before.out));
}

TEST(LayoutRender, CliRejectsBadRequestsWithExit2) {
    const std::string dir = test::tempDir("render_bad");
    const std::string model = dir + "/m.onnx";
    onnxio::exportModelFile(examples::find("conv_bn_relu")->build(), model);
    EXPECT_EQ(test::runCli({"render", model, "-o", dir + "/g.jpg"}).exitCode, 2);
    EXPECT_EQ(test::runCli({"render", model}).exitCode, 2);
    auto after = test::runCli({"render", model, "-o", dir + "/g.svg", "--after", "fold"});
    EXPECT_EQ(after.exitCode, 2);
    EXPECT_NE(after.err.find("unknown pass 'fold'"), std::string::npos) << after.err;
    EXPECT_EQ(test::runCli({"render", dir + "/missing.onnx", "-o", dir + "/g.svg"}).exitCode, 2);
}
