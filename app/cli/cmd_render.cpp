#include <ostream>

#include "cli/Command.h"
#include "ir/Error.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "render", "render MODEL -o OUT.(svg|png|dot) [--no-fold] [--after PASS]",
    "Draws the graph headless with the app's layout (Graphviz dot), colors and folded constants.",
    {"-o", "--after"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"-o", "--no-fold", "--after"});
        if (args.option("--after"))
            throw Error(ErrorKind::Unsupported, "--after: the pass pipeline is not available yet");
        auto outPath = args.option("-o");
        if (!outPath) throw Error(ErrorKind::BadInput, "render needs -o OUT.svg, OUT.png or OUT.dot");
        const std::string& o = *outPath;
        auto dot = o.rfind('.');
        std::string format = dot == std::string::npos ? "" : o.substr(dot + 1);
        if (format != "svg" && format != "png" && format != "dot")
            throw Error(ErrorKind::BadInput, "render: output must end in .svg, .png or .dot: " + o);
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), options);
        layout::DisplayOptions display;
        display.foldConstants = !args.flag("--no-fold");
        display.opset = model.opsetFor("") ? model.opsetFor("") : 17;
        auto dg = layout::buildDisplayGraph(model.graph, display);
        layout::renderWithGraphviz(layout::toLayoutRequest(dg, nullptr, true), format, o);
        out << "wrote " << o << " (" << dg.nodes.size() << " boxes, " << dg.edges.size() << " edges)\n";
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
