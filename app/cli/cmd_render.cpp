#include <ostream>

#include "cli/Command.h"
#include "ir/Error.h"
#include "layout/DisplayGraph.h"
#include "layout/Layout.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

namespace passlens::cli {

REGISTER_COMMAND({
    "render", "render MODEL -o OUT.(svg|png|dot) [--no-fold] [--after PASS]",
    "Draws the graph headless with the app's layout (Graphviz dot), colors and folded constants.",
    {"-o", "--after"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"-o", "--no-fold", "--after"});
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
        if (auto after = args.option("--after")) {
            // The `all` pipeline up to and including PASS; a pass outside it runs on its own.
            const auto& registry = passes::PassRegistry::global();
            (void)registry.create(*after);  // unknown name → BadInput listing the valid ones
            std::vector<std::string> names;
            for (const auto& name : registry.pipeline(passes::Level::All)) {
                names.push_back(name);
                if (name == *after) break;
            }
            if (names.empty() || names.back() != *after) names = {*after};
            passes::PassManager pm;
            for (const auto& name : names) pm.addPass(name);
            passes::PipelineOptions po;
            po.keepSnapshots = false;
            pm.run(model, po);
        }
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
