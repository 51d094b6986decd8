#include <filesystem>
#include <ostream>

#include "cli/Command.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "convert", "convert IN OUT [--external-data FILE] [--no-shape-inference]",
    "Import then export, losing nothing. Weights go to FILE (beside OUT) with --external-data, or when IN had external data.",
    {"--external-data"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--external-data", "--no-shape-inference"});
        args.noteNoEffect("--dim", "does not apply to convert: the model is written with the shapes it has", err);
        onnxio::ImportOptions options;
        options.inferShapes = !args.flag("--no-shape-inference");
        const std::string& in = args.positional(0, "IN");
        const std::string& outPath = args.positional(1, "OUT");
        auto model = onnxio::importModelFile(in, options);
        onnxio::ExportOptions eo;
        if (auto ext = args.option("--external-data")) eo.externalDataFile = *ext;
        else {
            bool hadExternal = false;
            model.graph.forEachGraph([&](const ir::Graph& g) {
                for (auto v : g.initializerOrder())
                    if (g.value(v).initializer->external.present()) hadExternal = true;
            });
            if (hadExternal) eo.externalDataFile = std::filesystem::path(outPath).filename().string() + ".data";
        }
        onnxio::exportModelFile(model, outPath, eo);
        for (const auto& w : model.warnings) err << "warning: " << w << "\n";
        out << "wrote " << outPath << (eo.externalDataFile.empty() ? "" : " (+ " + eo.externalDataFile + ")") << "\n";
        return 0;
    }});

}  // namespace passlens::cli
