// `optimize --report` is unchanged by the engine's restructuring for scale (issue #14): per pass,
// the node counts, the changes (kinds, rules, node names and ids, provenance, reasons) and the
// remarks on the five real models and every teaching example, at each level and in fixed-point
// mode, equal those of reports written by main's passlens-cli before the restructuring.
// The golden file holds one line per pass with the counts and a digest of the pass's report
// (timing removed). Regenerate it only when a pass's behaviour is meant to change:
//   tests/core/golden/make_report_golden.sh MAIN_PASSLENS_CLI build/tests/passlens_core_tests
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "TestSupport.h"
#include "examples/Examples.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"
#include "passes/Report.h"

namespace {

using namespace passlens;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

/// __FILE__ is relative to the build folder when the compiler ran there (BUILD/tests/tmp is absolute).
fs::path sourceDir() {
    fs::path f(__FILE__);
    if (f.is_relative()) f = fs::path(PASSLENS_TEST_TMP).parent_path().parent_path() / f;
    return f.lexically_normal().parent_path();
}
const std::string kGolden = (sourceDir() / "golden" / "optimize_reports.txt").string();

struct Run {
    std::string level;  ///< CLI --level
    bool fixedPoint = false;
    std::string id() const { return level + (fixedPoint ? "+fixed-point" : ""); }
};
const std::vector<Run>& runs() {
    static const std::vector<Run> r = {{"basic"}, {"extended"}, {"all"}, {"extended", true}};
    return r;
}

/// Real models plus every teaching example written out as the CLI would read it.
std::vector<std::pair<std::string, std::string>> models() {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& f : test::realModelNames()) out.push_back({fs::path(f).stem().string(), test::realModel(f)});
    const fs::path dir = fs::path(PASSLENS_TEST_TMP) / "report_golden_models";
    fs::create_directories(dir);
    for (const auto& e : examples::all()) {
        const fs::path p = dir / (e.id + ".onnx");
        onnxio::exportModelFile(e.build(), p.string());
        out.push_back({e.id, p.string()});
    }
    return out;
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
}

/// "<model> <run> <index> <pass> <before> <after> <changes> <remarks> <digest>" per pass, plus a
/// line with the iteration count.
std::vector<std::string> digestLines(const std::string& model, const std::string& run, ordered_json report) {
    std::vector<std::string> out;
    size_t index = 0;
    for (auto& pass : report["passes"]) {
        pass.erase("ms");
        std::ostringstream line;
        line << model << " " << run << " " << index++ << " " << pass["name"].get<std::string>() << " "
             << pass["nodes_before"].get<size_t>() << " " << pass["nodes_after"].get<size_t>() << " "
             << pass["changes"].size() << " " << pass["remarks"].size() << " " << std::hex << std::setw(16)
             << std::setfill('0') << fnv1a(pass.dump()) << std::dec;
        out.push_back(line.str());
    }
    out.push_back(model + " " + run + " iterations " + std::to_string(report["iterations"].get<int>()));
    return out;
}

ordered_json optimizeReport(const std::string& path, const Run& run) {
    ir::Model model = onnxio::importModelFile(path);
    passes::PassManager pm;
    pm.addLevel(passes::parseLevel(run.level));
    passes::PipelineOptions options;
    options.fixedPoint = run.fixedPoint;
    options.keepSnapshots = false;  // as the CLI
    return passes::pipelineToJson(pm.run(model, options));
}

std::vector<std::string> readLines(const std::string& path) {
    std::vector<std::string> out;
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);)
        if (!line.empty() && line[0] != '#') out.push_back(line);
    return out;
}

}  // namespace

TEST(ReportGolden, OptimizeReportsMatchMainBeforeTheRestructuring) {
    const auto all = models();  // also writes the examples where make_report_golden.sh reads them
    // Golden writing mode: PASSLENS_REPORT_GOLDEN_FROM names a folder of reports that main's CLI
    // wrote as <model>.<run>.json; their digests become the golden file.
    if (const char* from = std::getenv("PASSLENS_REPORT_GOLDEN_FROM")) {
        std::ofstream out(kGolden);
        out << "# written by tests/core/golden/make_report_golden.sh from main's passlens-cli; see test_report_golden.cpp\n";
        for (const auto& [name, path] : all)
            for (const auto& run : runs()) {
                std::ifstream f(fs::path(from) / (name + "." + run.id() + ".json"));
                ASSERT_TRUE(f) << "missing report for " << name << " " << run.id();
                for (const auto& line : digestLines(name, run.id(), ordered_json::parse(f))) out << line << "\n";
            }
        GTEST_SKIP() << "golden file written to " << kGolden;
    }
    const std::vector<std::string> golden = readLines(kGolden);
    ASSERT_FALSE(golden.empty()) << kGolden;
    std::vector<std::string> got;
    for (const auto& [name, path] : all)
        for (const auto& run : runs())
            for (const auto& line : digestLines(name, run.id(), optimizeReport(path, run))) got.push_back(line);
    ASSERT_EQ(got.size(), golden.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], golden[i]) << "line " << i + 1;
}

TEST(ReportGolden, DigestSeesAChangedReason) {
    // The digest must be able to fail: one changed word in one reason changes the pass's line.
    ordered_json report = optimizeReport(test::realModel("ch_ppocr_mobile_v2.0_cls_infer.onnx"), {"extended"});
    auto before = digestLines("m", "r", report);
    for (auto& pass : report["passes"])
        if (!pass["changes"].empty()) {
            pass["changes"][0]["reason"] = pass["changes"][0]["reason"].get<std::string>() + "!";
            break;
        }
    auto after = digestLines("m", "r", report);
    ASSERT_EQ(before.size(), after.size());
    EXPECT_NE(before, after);
}
