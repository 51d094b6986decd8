#include <ostream>

#include "analysis/Explain.h"
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
        if (auto d = args.option("--max-depth")) {
            try {
                size_t used = 0;
                options.fusion.maxDepth = std::stoi(*d, &used);
                if (used != d->size() || options.fusion.maxDepth < 1) throw 0;
            } catch (...) {
                throw UsageError{"--max-depth needs a positive integer, got '" + *d + "'"};
            }
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
        if (args.flag("--json")) out << analysis::explanationToJson(model.graph, e).dump(2) << "\n";
        else out << analysis::explanationToText(model.graph, e);
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
