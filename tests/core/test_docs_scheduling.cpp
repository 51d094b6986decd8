// docs/scheduling.md: its figures are what the CLI draws today (regenerated and compared byte for
// byte), and the peaks its step table and text quote are the CLI's.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "TestSupport.h"

using namespace passlens;

namespace {

const std::string kDocs = PASSLENS_DOCS_DIR;

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST(DocsScheduling, FiguresAreWhatTheCliDraws) {
    const std::string dir = test::tempDir("docs_scheduling");
    auto m = test::runCli({"memplan", kDocs + "/figures/nas_cells.onnx", "--schedule", "best", "--svg", dir + "/s.svg"});
    ASSERT_EQ(m.exitCode, 0) << m.err;
    EXPECT_EQ(slurp(dir + "/s.svg"), slurp(kDocs + "/figures/schedules_nas_cells.svg"))
        << "regenerate: passlens-cli memplan docs/figures/nas_cells.onnx --schedule best --svg docs/figures/schedules_nas_cells.svg";
    auto g = test::runCli({"grad", std::string(PASSLENS_FIXTURES_DIR) + "/gpt_tiny_static.onnx", "-o", dir + "/t.onnx", "--recompute",
                           "pareto", "--svg", dir + "/r.svg"});
    ASSERT_EQ(g.exitCode, 0) << g.err;
    EXPECT_EQ(slurp(dir + "/r.svg"), slurp(kDocs + "/figures/recompute_gpt_tiny.svg"))
        << "regenerate with the command in docs/scheduling.md";
    // --svg without a curve to chart is a usage error.
    auto bad = test::runCli({"grad", std::string(PASSLENS_FIXTURES_DIR) + "/gpt_tiny_static.onnx", "-o", dir + "/t.onnx", "--svg", dir + "/x.svg"});
    EXPECT_EQ(bad.exitCode, 2);
}

TEST(DocsScheduling, QuotedPeaksAreTheCliPeaks) {
    const std::string page = slurp(kDocs + "/scheduling.md");
    for (const char* schedule : {"exporter", "best"}) {
        auto r = test::runCli({"memplan", kDocs + "/figures/nas_cells.onnx", "--schedule", schedule, "--json"});
        ASSERT_EQ(r.exitCode, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        const auto live = j["live_bytes_per_step"].get<std::vector<int64_t>>();
        const auto names = j["schedule"].get<std::vector<std::string>>();
        ASSERT_EQ(live.size(), 20u);
        // Every row of the step table: "| step | exporter node | live | searched node | live |".
        for (size_t i = 0; i < live.size(); ++i) {
            const std::string cell = "| " + names[i] + " | ";
            const std::string kib = std::to_string(live[i] / 1024);
            const size_t row = page.find("\n| " + std::to_string(i) + " | ");
            ASSERT_NE(row, std::string::npos) << i;
            const std::string line = page.substr(row + 1, page.find('\n', row + 1) - row - 1);
            const bool quoted = line.find(cell + kib + " |") != std::string::npos || line.find(cell + "**" + kib + "** |") != std::string::npos;
            EXPECT_TRUE(quoted) << schedule << " step " << i << ": expected " << names[i] << " with " << kib << " KiB in: " << line;
        }
    }
    EXPECT_NE(page.find("139,264 B"), std::string::npos);
    EXPECT_NE(page.find("53,248 B"), std::string::npos);
}
