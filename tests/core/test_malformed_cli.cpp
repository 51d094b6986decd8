// Every CLI command on every malformed model (tests/gen/malformed): exit 1 or 2, one line naming
// the node or value, within seconds, never a signal. Valid-but-heavy models (folding or running
// them would need gigabytes) may succeed statically, but `run` must stop at its memory budget.
#include <gtest/gtest.h>

#include <fstream>

#include <algorithm>
#include <filesystem>

#include "gen/malformed/MalformedModels.h"
#include "TestSupport.h"

using namespace passlens;

namespace {

const std::vector<malformed::MalformedModel>& corpus() {
    static const auto models = malformed::malformedModels();
    return models;
}

struct CommandLine {
    std::string command;
    std::vector<std::string> args;
};

std::vector<CommandLine> everyCommand(const std::string& model, const std::string& outDir) {
    return {{"info", {"info", model}},
            {"convert", {"convert", model, outDir + "/converted.onnx"}},
            {"print", {"print", model}},
            {"optimize", {"optimize", model, "-o", outDir + "/optimized.onnx", "--level", "all"}},
            {"explain", {"explain", model}},
            {"run", {"run", model, "--out-dir", outDir}},
            {"memplan", {"memplan", model}},
            {"domtree", {"domtree", model}},
            {"render", {"render", model, "-o", outDir + "/render.svg"}}};
}

class MalformedCli : public ::testing::TestWithParam<size_t> {};

TEST_P(MalformedCli, EveryCommandFailsCleanly) {
    const auto& m = corpus()[GetParam()];
    // Each test writes its own copy: CTest runs these in parallel processes, and rewriting a
    // shared corpus folder truncated files another process had memory-mapped (SIGBUS).
    std::string path = test::tempDir("model") + "/" + m.name + ".onnx";
    std::ofstream(path, std::ios::binary) << m.bytes;
    std::string outDir = test::tempDir("out");
    for (const auto& c : everyCommand(path, outDir)) {
        SCOPED_TRACE(m.name + " (" + m.defect + "): passlens-cli " + c.command);
        // No time limit here (CTest's timeout catches a hang): wall time under a loaded, instrumented
        // build says nothing about the product; tests/bench times the commands.
        auto r = test::runCli(c.args);
        EXPECT_LT(r.exitCode, 128) << "killed by signal " << r.exitCode - 128 << "\n" << r.err;
        bool mustFail = !m.validButHeavy || c.command == "run";
        if (!mustFail && r.exitCode == 0) continue;
        EXPECT_TRUE(r.exitCode == 1 || r.exitCode == 2) << "exit " << r.exitCode << "\n" << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
        EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
        EXPECT_NE(r.err.find(m.mustName), std::string::npos) << "message does not name " << m.mustName << ": " << r.err;
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedCli, ::testing::Range<size_t>(0, malformed::malformedModels().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) { return corpus()[info.param].name; });

}  // namespace
