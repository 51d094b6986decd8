#include "autodiff/AutodiffPass.h"

#include "autodiff/Autodiff.h"
#include "ir/Error.h"
#include "memory/ShapeAssist.h"
#include "onnx/ShapeInference.h"
#include "passes/Pass.h"

namespace passlens::autodiff {

using namespace passlens::passes;

namespace {

class AutodiffPass final : public Pass {
public:
    explicit AutodiffPass(AutodiffOptions defaults = {}) : defaults_(std::move(defaults)) {}
    std::string name() const override { return "autodiff"; }
    std::string description() const override {
        return "Adds a loss and the backward graph (reverse-mode gradients in standard ONNX ops)";
    }
    std::vector<PassOption> options() const override {
        auto param = [](const char* key) {
            return [key](PassOptions& o, const std::string& v) { o.params[key] = v; };
        };
        return {{"loss", PassOption::Type::Choice, {"mse", "cross-entropy", "none"}, "mse", "the loss added after the output",
                 param("autodiff.loss")},
                {"output", PassOption::Type::Text, {}, "the first output", "the model output the loss reads", param("autodiff.output")},
                {"wrt", PassOption::Type::Text, {}, "all", "all, or the tensors to differentiate (a,b,c)", param("autodiff.wrt")}};
    }

protected:
    void runImpl(PassContext& ctx) const override {
        const AutodiffOptions o = optionsFromParams(ctx.options().params, defaults_);
        // Gradient rules need ranks (and often dims) that libonnx cannot see through Constant-fed
        // Reshapes of exported models; the types come back, the graph is untouched.
        ctx.refineValueTypes([](ir::Model& m) { memory::completeShapesViaLiftedConstants(m); });
        Rewriter& rw = ctx.rewriter();
        rw.setRule("autodiff-" + o.loss);
        TrainingGraph t = buildTrainingGraph(rw, o);
        rw.applied(t.backwardNodes, std::to_string(t.backwardNodes.size()) + " backward nodes compute " +
                                        std::to_string(t.gradients.size()) + " gradients of the " + o.loss + " loss");
        for (const auto& z : t.zeroGradients)
            rw.missed({}, "'" + z + "' has no path to the loss: its gradient is zeros");
        rw.setRule({});
    }

private:
    AutodiffOptions defaults_;
};

}  // namespace

AutodiffOptions optionsFromParams(const std::map<std::string, std::string>& params, AutodiffOptions o) {
    if (auto it = params.find("autodiff.loss"); it != params.end()) o.loss = it->second;
    if (auto it = params.find("autodiff.output"); it != params.end()) o.output = it->second;
    if (auto it = params.find("autodiff.wrt"); it != params.end()) o.wrt = parseWrtList(it->second);
    return o;
}

std::map<std::string, std::string> paramsFromOptions(const AutodiffOptions& o) {
    std::string wrt;
    for (const auto& w : o.wrt) wrt += (wrt.empty() ? "" : ",") + w;
    std::map<std::string, std::string> p{{"autodiff.loss", o.loss}, {"autodiff.wrt", wrt}};
    if (!o.output.empty()) p["autodiff.output"] = o.output;
    return p;
}

std::unique_ptr<Pass> makeAutodiffPass() { return std::make_unique<AutodiffPass>(); }
std::unique_ptr<Pass> makeAutodiffPass(const AutodiffOptions& defaults) { return std::make_unique<AutodiffPass>(defaults); }


ir::Model makeTrainingModel(const ir::Model& forward, const AutodiffOptions& options) {
    ir::Model m = forward;
    PassOptions po;
    po.params = paramsFromOptions(options);
    makeAutodiffPass()->run(m, po);
    onnxio::inferShapes(m);
    return m;
}

}  // namespace passlens::autodiff
