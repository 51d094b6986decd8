#pragma once
// One driver for every stage of the engine, shared by the libFuzzer targets (tests/fuzz) and the
// core tests that run the malformed corpus through every stage: import the bytes, then run one
// stage on the model. A passlens::Error is an accepted outcome (bad input, cleanly reported);
// anything else — a crash, a hang, another exception type — is a finding.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace passlens::fuzz {

enum class Stage {
    Import,   ///< import (no shape inference) → export
    Passes,   ///< import → every pass of level `all` → export
    Explain,  ///< import → explain (fusion groups + pattern remarks)
    Memplan,  ///< import → shape assist → memory plan (+ subgraph plans)
    Run,      ///< import → interpreter on random inputs, small memory budget and time limit
};

/// "import", "passes", "explain", "memplan", "run".
const char* stageName(Stage s);

/// Runs the stage; returns the passlens::Error message when the input was refused, nullopt when
/// it went through. `validateOps = false` skips the importer's op and schema validation, so the
/// stage sees nodes no valid model has (the pass guards must hold even then).
std::optional<std::string> runStage(Stage stage, std::string_view modelBytes, bool validateOps = true);

/// The run stage's limits: largest tensor, and wall time before the run is cancelled.
inline constexpr int64_t kRunMemoryBudget = int64_t(64) << 20;
inline constexpr int kRunTimeLimitMs = 2000;

}  // namespace passlens::fuzz
