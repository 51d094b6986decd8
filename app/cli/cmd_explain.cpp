#include <cstdint>
#include <ostream>

#include "pipeline/Explain.h"
#include "cli/Command.h"
#include "onnx/Import.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "explain", "explain MODEL [--node NAME] [--json] [--max-depth N] [--no-passes]",
    "Fusion groups (TVM FuseOps) of the top-level graph and, per node, each fusion considered for it: the rule "
    "that refused it and the node/edge that blocked it (with the pattern-fusion passes' remarks unless --no-passes).",
    {"--node", "--max-depth"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--node", "--json", "--max-depth", "--no-passes"});
        analysis::ExplainOptions options;
        options.runPatternPasses = !args.flag("--no-passes");
        if (args.option("--max-depth")) {
            uint64_t d = args.unsignedOption("--max-depth", 256);
            if (d < 1 || d > 1000000) throw UsageError{"--max-depth must be between 1 and 1000000"};
            options.fusion.maxDepth = static_cast<int>(d);
        }
        onnxio::ImportOptions io;
        io.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), io);
        analysis::Explanation e;
        if (auto name = args.option("--node")) {
            e = analysis::explainNode(model, analysis::findNodeForExplain(model.graph, *name), options);
        } else {
            e = analysis::explainModel(model, options);
        }
        if (args.flag("--json")) {
            analysis::writeExplanationJson(out, model.graph, e);
            out << "\n";
        } else {
            out << analysis::explanationToText(model.graph, e);
        }
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
