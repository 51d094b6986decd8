#pragma once
// Runs a pipeline of passes, keeping one snapshot of the model after each pass. Snapshots are
// ir::Model copies: structure is copied, initializer payloads are shared (Buffer), so many
// snapshots of a large model cost little.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/Pass.h"
#include "passes/PassRegistry.h"

namespace passlens::passes {

struct PipelineOptions {
    PassOptions pass;
    bool fixedPoint = false;   ///< repeat the whole pipeline until nothing changes
    int maxIterations = 8;     ///< cap for fixedPoint
    bool keepSnapshots = true;
    bool inferShapesAfterEachPass = true;
    /// Called after each pass with the model as it stands (e.g. --verify). May throw.
    std::function<void(const PassResult&, const ir::Model&)> afterPass;
};

struct PipelineStep {
    PassResult result;
    int iteration = 0;
    std::shared_ptr<const ir::Model> snapshot;  ///< the model after this pass (if kept)
};

struct PipelineResult {
    std::shared_ptr<const ir::Model> initial;   ///< snapshot before the first pass
    /// Display names of the main graph's nodes before the first pass, by id (kept even without
    /// snapshots), so reports can name the nodes a change's provenance points to.
    std::map<ir::NodeId, std::string> originalNodeNames;
    std::vector<PipelineStep> steps;
    int iterations = 0;
};

class PassManager {
public:
    explicit PassManager(const PassRegistry& registry = PassRegistry::global()) : registry_(registry) {}
    /// Appends passes by name (throws BadInput for an unknown name, listing the valid ones). `args`
    /// set the pass's declared options for this step only (checked here: BadInput naming them).
    void addPass(const std::string& name, const PassArgs& args = {});
    void addPass(std::unique_ptr<Pass> pass, const PassArgs& args = {});
    void addLevel(Level level);
    const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }
    const PassRegistry& registry() const { return registry_; }
    /// The option values of each pass (parallel to passes()).
    const std::vector<PassArgs>& args() const { return args_; }
    bool contains(const std::string& name) const;

    PipelineResult run(ir::Model& model, const PipelineOptions& options = {}) const;

private:
    const PassRegistry& registry_;
    std::vector<std::unique_ptr<Pass>> passes_;
    std::vector<PassArgs> args_;
};

}  // namespace passlens::passes
