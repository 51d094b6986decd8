#include <ostream>

#include "cli/Command.h"
#include "ir/Printer.h"
#include "onnx/Import.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "print", "print MODEL",
    "The graph as text, one node per line with output types (subgraphs indented).",
    {},
    [](const Args& args, std::ostream& out, std::ostream&) {
        args.expectOnly({});
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        out << ir::printModel(onnxio::importModelFile(args.positional(0, "MODEL"), options));
        return 0;
    }});

}  // namespace passlens::cli
