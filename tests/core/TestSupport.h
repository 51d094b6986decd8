#pragma once
// Shared helpers for core tests: where the data is, running the CLI, comparing graphs.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::test {

inline std::string modelsDir() { return PASSLENS_MODELS_DIR; }
inline std::string testdataDir() { return PASSLENS_TESTDATA_DIR; }
inline std::string cliPath() { return PASSLENS_CLI; }
/// A fresh folder under the build tree for this test's files.
std::string tempDir(const std::string& name);  ///< fresh folder tmp/<Suite.Test>/<name>

/// The five real models of DESIGN.md, by file name.
const std::vector<std::string>& realModelNames();
/// The path of a downloaded model. When the file is missing (fetch_models skipped: offline) it
/// prints PASSLENS_MODELS_MISSING, which CTest reads as "skipped" for the tests labelled models
/// (tests/CMakeLists.txt), and throws, so the test stops there.
std::string realModel(const std::string& file);
/// Every model.onnx under the libonnx-testdata folders, sorted.
std::vector<std::string> testdataModels();

struct CliResult {
    int exitCode = -1;
    std::string out, err;
};
/// Runs a passlens-cli command line in this process (cli::runCommandLine, the code passlens-cli's
/// main() runs), capturing what it writes to stdout and stderr. A few hundred command lines per
/// suite cost no process start each (a second under the sanitizers for every ten).
CliResult runCli(const std::vector<std::string>& args);
/// The same command line run by the passlens-cli executable in a child process (shell-quoted here):
/// for what only a process shows (its exit status when it dies, output written to the real stdout).
CliResult runCliProcess(const std::vector<std::string>& args);

/// A canonical text form of a graph (nodes, attributes, values, initializer hashes) for equality
/// checks between two imports; ids are excluded, order is kept.
std::string canonicalText(const ir::Model& m);

}  // namespace passlens::test
