#pragma once
// A pass: the non-virtual run() verifies, times and records around the pass's own runImpl()
// (as ONNX Runtime's GraphTransformer::Apply around ApplyImpl).
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/ChangeLog.h"
#include "passes/Rewriter.h"

namespace passlens::passes {

struct PassOptions {
    int64_t foldSizeLimitBytes = 64ll << 20;  ///< constant folding refuses larger outputs
    int64_t targetOpset = 0;                  ///< 0 = keep the model's opset
    std::string targetLayout;                 ///< "NHWC" / "NCHW" for the layout pass
    bool verifyStructure = true;              ///< run the IR verifier after the pass
    /// Options of individual passes, keyed "<pass>.<option>" ("autodiff.loss" → "mse").
    std::map<std::string, std::string> params;
    const std::atomic<bool>* cancel = nullptr;
};

/// One option a pass declares: set in pipeline text (`layout{to=NHWC}`, `version-convert:18`),
/// listed by `passlens-cli passes`. The value is checked against `type` (and `choices`) before
/// `apply` stores it where the pass reads it (a PassOptions field or params["<pass>.<name>"]).
struct PassOption {
    enum class Type { Int, Text, Choice };
    std::string name;                  ///< "to", "opset"
    Type type = Type::Text;
    std::vector<std::string> choices;  ///< Choice: the accepted values
    std::string defaultValue;          ///< what the pass does without it ("sqrt", "keep the model's opset")
    std::string doc;
    /// Stores a checked value; may throw BadInput for a value the type cannot rule out.
    std::function<void(PassOptions&, const std::string&)> apply;
};
/// "int", "text" or the choices ("NHWC|NCHW").
std::string typeText(const PassOption& o);

/// Option values for one pass of a pipeline, in the order given ({"to", "NHWC"}).
using PassArgs = std::vector<std::pair<std::string, std::string>>;
class Pass;
/// Checks `args` against the options `pass` declares and stores them into `options`. BadInput
/// names the pass, the option and the value: "pass 'layout' has no option 'x'; its options: to",
/// "layout{to=...}: 'NCWH' is not one of NHWC, NCHW".
void applyPassArgs(const Pass& pass, const PassArgs& args, PassOptions& options);

struct PassResult {
    std::string name;
    size_t nodesBefore = 0, nodesAfter = 0;   ///< main graph plus subgraphs
    double ms = 0;
    bool changed = false;
    std::vector<Change> changes;
    std::vector<Remark> remarks;
    /// Figures a pass reports besides nodes (group-functions: "functions", "kernels", ...).
    std::map<std::string, int64_t> counters;
};

class Pass;

/// Handed to runImpl: the model, the options, and rewriters for each graph.
class PassContext {
public:
    PassContext(ir::Model& model, const PassOptions& options, const Pass& pass, PassResult& result);
    /// Read-only: passes edit through rewriter() / rewriterFor() / forEachGraph().
    const ir::Model& model() const { return model_; }
    const PassOptions& options() const { return options_; }
    /// A rewriter for the main graph.
    Rewriter& rewriter() { return rewriterFor(model_.graph, ""); }
    /// A rewriter for any graph of the model (subgraph path for reports, e.g. "If_3/then_branch").
    Rewriter& rewriterFor(const ir::Graph& g, const std::string& graphPath);
    /// Calls f(rewriter) for the main graph and every nested subgraph (inner graphs first).
    void forEachGraph(const std::function<void(Rewriter&)>& f);
    void checkCancelled() const;
    /// Refreshes value types by ONNX shape inference (types only: the computation is the same,
    /// so nothing is recorded). False when inference failed; the types then stay as they were.
    bool inferShapes();
    /// Lets `refine` fill in value types (an inference the pass brings, e.g. through lifted
    /// constants). Types only: the context throws Internal when nodes or values changed.
    void refineValueTypes(const std::function<void(ir::Model&)>& refine);
    /// Records a figure in PassResult::counters.
    void count(const std::string& key, int64_t value) { result_.counters[key] = value; }

private:
    ir::Model& model_;
    const PassOptions& options_;
    const Pass& pass_;
    PassResult& result_;
    std::vector<std::pair<ir::Graph*, std::unique_ptr<Rewriter>>> rewriters_;
};

class Pass {
public:
    virtual ~Pass() = default;
    /// Short id used in --passes and reports ("dce", "cse", "constant-folding", ...).
    virtual std::string name() const = 0;
    /// One line for the UI ("Removes nodes whose outputs reach no graph output").
    virtual std::string description() const = 0;
    /// True when every value the pass leaves behind keeps the exact type it had (the pass only
    /// removes nodes, merges equal computations or bypasses a node whose input already has the
    /// output's type), so the pass manager may skip re-running shape inference after it.
    virtual bool preservesValueTypes() const { return false; }
    /// The options pipeline text may set on this pass (none by default).
    virtual std::vector<PassOption> options() const { return {}; }
    /// Verifies, times and records; never virtual so no pass can skip it.
    PassResult run(ir::Model& model, const PassOptions& options) const;

protected:
    virtual void runImpl(PassContext& ctx) const = 0;
};

/// Counts nodes of a graph and all its subgraphs.
size_t countNodesDeep(const ir::Graph& g);

}  // namespace passlens::passes
