#include <ostream>

#include "cli/Command.h"
#include "onnx/Import.h"
#include "onnx/ModelInfo.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "info", "info MODEL [--json] [--no-shape-inference]",
    "Producer, IR version, opsets, inputs/outputs with shapes, node counts by op type, parameters.",
    {},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--json", "--no-shape-inference"});
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        options.inferShapes = !args.flag("--no-shape-inference");
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), options);
        auto info = onnxio::describeModel(model);
        if (args.flag("--json")) out << onnxio::modelInfoToJson(info) << "\n";
        else out << onnxio::modelInfoToText(info);
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
