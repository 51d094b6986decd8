// passlens-cli grad: the training graph of a model (loss + backward graph in standard ONNX ops).
#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "autodiff/Autodiff.h"
#include "autodiff/Recompute.h"
#include "cli/Command.h"
#include "ir/Error.h"
#include "onnx/Checker.h"
#include "onnx/Export.h"
#include "onnx/Import.h"
#include "plot/SvgChart.h"
#include "report/Charts.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "grad",
    "grad MODEL -o TRAIN.onnx [--loss mse|cross-entropy|none] [--output NAME] [--wrt all|NAME,...] [--recompute none|sqrt|all|mincut|pareto|budget=BYTES[:heavy|:no-heavy]] [--json] [--svg FILE]",
    "Builds the training graph: outputs = the model's outputs, `loss`, then `<name>_grad` per requested tensor "
    "(all = every float initializer). mse adds input `<output>_target`, cross-entropy `<output>_labels` (int64 [N]). "
    "--recompute drops saved activations and recomputes them in the backward pass (sqrt: Chen's sqrt(n) checkpoints; "
    "mincut: fewest bytes kept, as PyTorch's partitioner; budget: fewest extra FLOPs whose planned arena fits) and reports "
    "the planned arena and extra FLOPs; pareto writes the training graph unchanged and prints the arena-vs-FLOPs curve "
    "with store-all, sqrt and all marked (--svg FILE: as a chart). --json: the same as JSON.",
    {"-o", "--loss", "--output", "--wrt", "--recompute", "--svg"},
    [](const Args& args, std::ostream& out, std::ostream&) {
        args.expectOnly({"-o", "--loss", "--output", "--wrt", "--recompute", "--json", "--svg"});
        const std::string in = args.positional(0, "MODEL");
        auto outPath = args.option("-o");
        if (!outPath) throw UsageError{"missing -o TRAIN.onnx"};
        // Parsed before the import so a typo fails fast.
        const autodiff::RecomputeOptions recompute = autodiff::parseRecomputeOptions(args.option("--recompute").value_or("none"));
        autodiff::AutodiffOptions o;
        o.loss = args.option("--loss").value_or("mse");
        o.output = args.option("--output").value_or("");
        o.wrt = autodiff::parseWrtList(args.option("--wrt").value_or("all"));
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        const ir::Model forward = onnxio::importModelFile(in, io);
        const size_t forwardNodes = forward.graph.nodeCount();
        ir::Model train = autodiff::makeTrainingModel(forward, o);
        std::optional<autodiff::RecomputeResult> recomputed;
        std::optional<autodiff::RecomputeCurve> curve;
        if (recompute.strategy == autodiff::RecomputeOptions::Strategy::Pareto) curve = autodiff::recomputeCurve(train, recompute);
        else if (args.option("--recompute")) recomputed = autodiff::recomputeModel(train, recompute);
        size_t lossNodes = 0, backwardNodes = 0;
        for (ir::NodeId n : train.graph.nodeOrder()) {
            auto role = autodiff::provenanceOf(train.graph.node(n)).role;
            lossNodes += role == autodiff::Role::Loss;
            backwardNodes += role == autodiff::Role::Backward;
        }
        onnxio::exportModelFile(train, *outPath);
        if (auto problem = onnxio::checkModelFile(*outPath))
            throw Error(ErrorKind::CheckFailed, "the training graph fails the ONNX checker: " + *problem);
        const size_t grads = train.graph.outputs().size() - forward.graph.outputs().size() - 1;
        if (auto svg = args.option("--svg")) {
            if (!curve) throw UsageError{"--svg charts the curve of --recompute pareto"};
            plot::saveSvg(*svg, report::recomputeChart(*curve));
        }
        if (args.flag("--json")) {
            nlohmann::ordered_json j;
            j["output"] = *outPath;
            j["forward_nodes"] = forwardNodes;
            j["loss_nodes"] = lossNodes;
            j["backward_nodes"] = backwardNodes;
            j["gradients"] = grads;
            if (recomputed) j["recompute"] = autodiff::resultToJson(*recomputed);
            if (curve) j["pareto"] = autodiff::curveToJson(*curve);
            out << j.dump(2) << "\n";
            return kOk;
        }
        out << "wrote " << *outPath << ": " << forwardNodes << " forward, " << lossNodes << " loss and " << backwardNodes
            << " backward nodes; " << grads << " gradients of the " << o.loss << " loss\n";
        if (recomputed) out << "recompute " << recomputed->message << "\n";
        if (curve) out << autodiff::curveToText(*curve);
        return kOk;
    },
});

}  // namespace passlens::cli
