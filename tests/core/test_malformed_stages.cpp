// The malformed corpus through every stage in process (tests/fuzz/Stages.h): refused with an error
// naming the node or value; with the importer's validation off, the passes, analyses and planner
// still never crash on nodes a pattern does not expect (Erf or Sigmoid without inputs, ...).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gen/malformed/MalformedModels.h"
#include "fuzz/Stages.h"

using namespace passlens;
using fuzz::Stage;

namespace {

constexpr Stage kEveryStage[] = {Stage::Import, Stage::Passes, Stage::Explain, Stage::Memplan, Stage::Run};

bool isCycle(const malformed::MalformedModel& m) { return m.name == "cycle_long_chain"; }

}  // namespace

TEST(MalformedStages, RefusedNamingTheNodeOrValue) {
    for (const auto& m : malformed::malformedModels()) {
        for (Stage s : kEveryStage) {
            SCOPED_TRACE(m.name + " / " + fuzz::stageName(s));
            auto error = fuzz::runStage(s, m.bytes);
            if (m.validButHeavy && s != Stage::Run) continue;  // valid: may go through
            // Shape overflow found by inference is not seen by the import stage (no inference there).
            if (m.name == "shape_overflow_inferred" && s == Stage::Import) continue;
            ASSERT_TRUE(error.has_value());
            EXPECT_NE(error->find(m.mustName), std::string::npos) << *error;
        }
    }
}

TEST(MalformedStages, HeavyModelStopsAtTheBudgetNamingTheNode) {
    for (const auto& m : malformed::malformedModels()) {
        if (!m.validButHeavy) continue;
        auto error = fuzz::runStage(Stage::Run, m.bytes);
        ASSERT_TRUE(error.has_value()) << m.name;
        EXPECT_NE(error->find("memory budget"), std::string::npos) << *error;
        EXPECT_NE(error->find(m.mustName), std::string::npos) << *error;
    }
}

// Without the importer's schema validation the stages see the malformed nodes themselves; they
// must refuse or skip them, never crash. (A crash fails this test by killing the process.)
TEST(MalformedStages, UnvalidatedNodesNeverCrashAStage) {
    int imported = 0;
    for (const auto& m : malformed::malformedModels()) {
        if (isCycle(m)) continue;  // refused by the verifier, validation or not
        for (Stage s : kEveryStage) {
            SCOPED_TRACE(m.name + " / " + fuzz::stageName(s));
            auto error = fuzz::runStage(s, m.bytes, /*validateOps=*/false);
            if (s == Stage::Import && !error) ++imported;
        }
    }
    EXPECT_GE(imported, 10);  // most malformed nodes reach the passes when validation is off
}

// Inputs the fuzzers once crashed on (tests/fuzz/regressions): every stage refuses or takes them.
TEST(FuzzRegressions, EveryFileThroughEveryStage) {
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(PASSLENS_FUZZ_REGRESSIONS)) {
        if (entry.path().extension() == ".md") continue;
        std::ifstream in(entry.path(), std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        for (Stage s : kEveryStage) {
            SCOPED_TRACE(entry.path().filename().string() + " / " + fuzz::stageName(s));
            (void)fuzz::runStage(s, bytes);
        }
        ++files;
    }
    RecordProperty("files", files);
}
