#include "Stages.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "pipeline/Explain.h"
#include "eval/Interpreter.h"
#include "eval/MemoryBudget.h"
#include "ir/Error.h"
#include "memory/MemoryPlan.h"
#include "memory/ShapeAssist.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

namespace passlens::fuzz {

namespace {

ir::Model import(std::string_view bytes, bool inferShapes, bool validateOps) {
    onnxio::ImportOptions options;
    options.inferShapes = inferShapes;
    options.validateOps = validateOps;
    return onnxio::importModelBytes(bytes, "/nonexistent", options);
}

/// Sets `cancel` after `ms` unless destroyed first, so a model with a huge Loop cannot hang a run.
class Watchdog {
public:
    Watchdog(std::atomic<bool>& cancel, int ms)
        : thread_([this, &cancel, ms] {
              std::unique_lock lock(mutex_);
              if (!done_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return finished_; })) cancel = true;
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            finished_ = true;
        }
        done_.notify_all();
        thread_.join();
    }

private:
    std::mutex mutex_;
    std::condition_variable done_;
    bool finished_ = false;
    std::thread thread_;
};

void runOnce(Stage stage, std::string_view bytes, bool validateOps) {
    switch (stage) {
    case Stage::Import: {
        auto m = import(bytes, false, validateOps);
        (void)onnxio::exportModelBytes(m);
        return;
    }
    case Stage::Passes: {
        auto m = import(bytes, true, validateOps);
        passes::PassManager pm;
        pm.addLevel(passes::Level::All);
        passes::PipelineOptions options;
        options.keepSnapshots = false;
        pm.run(m, options);
        (void)onnxio::exportModelBytes(m);
        return;
    }
    case Stage::Explain: {
        auto m = import(bytes, true, validateOps);
        auto e = analysis::explainModel(m);
        (void)analysis::explanationToText(m.graph, e);
        return;
    }
    case Stage::Memplan: {
        auto m = import(bytes, true, validateOps);
        memory::completeShapesViaLiftedConstants(m);
        memory::PlanOptions options;
        options.parallelAware = true;
        (void)memory::planMemory(m, m.graph, options);
        (void)memory::planSubgraphs(m, m.graph, options);
        return;
    }
    case Stage::Run: {
        auto m = import(bytes, true, validateOps);
        eval::MemoryBudgetScope budget(kRunMemoryBudget);  // random inputs count too
        eval::RunOptions options;
        options.maxMemoryBytes = kRunMemoryBudget;
        std::atomic<bool> cancel{false};
        options.cancel = &cancel;
        Watchdog watchdog(cancel, kRunTimeLimitMs);
        auto inputs = eval::randomInputs(m, 0);
        (void)eval::run(m, inputs, options);
        return;
    }
    }
}

}  // namespace

const char* stageName(Stage s) {
    switch (s) {
    case Stage::Import: return "import";
    case Stage::Passes: return "passes";
    case Stage::Explain: return "explain";
    case Stage::Memplan: return "memplan";
    case Stage::Run: return "run";
    }
    return "?";
}

std::optional<std::string> runStage(Stage stage, std::string_view modelBytes, bool validateOps) {
    try {
        runOnce(stage, modelBytes, validateOps);
        return std::nullopt;
    } catch (const Error& e) {
        return std::string(e.what());
    }
}

}  // namespace passlens::fuzz
