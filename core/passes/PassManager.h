#pragma once
// Runs a list of passes over a model, keeping one snapshot after each pass (structure copied,
// weights shared), optionally to a fixed point, optionally checking outputs after each pass.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "passes/Pass.h"

namespace passlens::passes {

struct Snapshot {
    std::string label;                        ///< "input" or the pass that produced it
    std::shared_ptr<const ir::Model> model;
};

struct PipelineOptions {
    PassOptions pass;
    bool fixedPoint = false;                  ///< repeat the list until nothing changes
    int maxIterations = 4;                    ///< cap for fixedPoint
    bool keepSnapshots = true;
    /// Called after each pass; returns a message when the model no longer matches the input.
    std::function<std::optional<std::string>(const ir::Model& after)> verifyAfterEach;
    std::function<void(size_t done, size_t total, const std::string& pass)> progress;
};

struct PipelineResult {
    std::vector<PassResult> passes;
    std::vector<Snapshot> snapshots;          ///< [0] = input, [i+1] = after passes[i]
    std::optional<size_t> firstMismatch;      ///< index into passes
    std::string mismatchMessage;
};

/// Runs `passNames` (registry names) on `model` in place.
PipelineResult runPipeline(ir::Model& model, const std::vector<std::string>& passNames, const PipelineOptions& options = {});

}  // namespace passlens::passes
