// Runs every case of ONNX's backend test data (node, pytorch-converted, pytorch-operator, simple)
// whose ops the interpreter supports, and compares with the reference outputs at the tolerance of
// ONNX's backend test runner (rtol 1e-3, atol 1e-7: |out - ref| <= atol + rtol*|ref|).
// Cases are classified "unsupported" by the capability check BEFORE running; a supported case that
// throws or mismatches is a failure. PASSLENS_CONFORMANCE_FILTER=substring limits the cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "TestSupport.h"
#include "eval/Interpreter.h"
#include "ir/Error.h"
#include "onnx/Import.h"
#include "onnx/TensorIO.h"

namespace passlens {
namespace {

namespace fs = std::filesystem;

/// Supported cases may only go up: raise this when kernels are added.
constexpr int kSupportedFloor = 856;

struct CaseResult {
    enum Kind { Passed, Failed, Unsupported } kind;
    std::string why;
};

CaseResult runCase(const fs::path& dir) {
    ir::Model m;
    try {
        m = onnxio::importModelFile((dir / "model.onnx").string());
    } catch (const Error& e) {
        return {CaseResult::Unsupported, std::string("import: ") + e.what()};
    }
    std::string why;
    if (!eval::isModelSupported(m, &why)) return {CaseResult::Unsupported, why};
    const size_t nIn = eval::runtimeInputs(m.graph).size();
    int sets = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_directory() || e.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
        ++sets;
        try {
            std::vector<ir::TensorPtr> inputs, expected;
            for (size_t i = 0;; ++i) {
                auto p = e.path() / ("input_" + std::to_string(i) + ".pb");
                if (!fs::exists(p)) break;
                inputs.push_back(onnxio::readTensorFile(p.string()));
            }
            for (size_t i = 0;; ++i) {
                auto p = e.path() / ("output_" + std::to_string(i) + ".pb");
                if (!fs::exists(p)) break;
                expected.push_back(onnxio::readTensorFile(p.string()));
            }
            if (inputs.size() != nIn) return {CaseResult::Unsupported, "test data has " + std::to_string(inputs.size()) + " inputs for " + std::to_string(nIn)};
            auto got = eval::run(m, inputs);
            auto diffs = eval::compareOutputs(m, got, expected, 1e-3, 1e-7);
            for (const auto& d : diffs)
                if (!d.ok)
                    return {CaseResult::Failed, e.path().filename().string() + " output '" + d.name + "': " +
                                                    (d.shapeMismatch ? "shape/type mismatch" : "max abs diff " + std::to_string(d.maxAbs))};
        } catch (const Error& ex) {
            // Some refusals depend on run-time values (Dropout's training_mode input is true
            // here): those are unsupported cases, not wrong results.
            if (ex.kind() == ErrorKind::Unsupported) return {CaseResult::Unsupported, ex.what()};
            return {CaseResult::Failed, e.path().filename().string() + ": " + ex.what()};
        } catch (const std::exception& ex) {
            return {CaseResult::Failed, e.path().filename().string() + ": " + ex.what()};
        }
    }
    if (sets == 0) return {CaseResult::Unsupported, "no test data sets"};
    return {CaseResult::Passed, {}};
}

TEST(EvalConformance, OnnxBackendTestData) {
    const char* filter = std::getenv("PASSLENS_CONFORMANCE_FILTER");
    const bool verbose = std::getenv("PASSLENS_CONFORMANCE_VERBOSE") != nullptr;
    int passed = 0, failed = 0, unsupported = 0;
    std::vector<std::string> failures;
    for (const auto& model : test::testdataModels()) {
        const fs::path dir = fs::path(model).parent_path();
        const std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
        if (filter && name.find(filter) == std::string::npos) continue;
        auto r = runCase(dir);
        if (r.kind == CaseResult::Passed) ++passed;
        else if (r.kind == CaseResult::Failed) {
            ++failed;
            failures.push_back(name + ": " + r.why);
        } else {
            ++unsupported;
            if (verbose) std::cout << "unsupported " << name << ": " << r.why << "\n";
        }
    }
    for (const auto& f : failures) ADD_FAILURE() << f;
    std::cout << passed << " passed, " << failed << " failed, " << unsupported << " unsupported\n";
    if (!filter) {
        EXPECT_GE(passed + failed, kSupportedFloor) << "supported cases fell below the recorded floor";
    }
}

}  // namespace
}  // namespace passlens
