#include <algorithm>
#include <ostream>

#include "cli/Command.h"
#include "ir/Error.h"
#include "layout/RenderModel.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

namespace passlens::cli {

namespace {

void runPipelineUpTo(ir::Model& model, const std::string& after) {
    // The `all` pipeline up to and including PASS; a pass outside it runs on its own.
    const auto& registry = passes::PassRegistry::global();
    (void)registry.create(after);  // unknown name → BadInput listing the valid ones
    std::vector<std::string> names;
    for (const auto& name : registry.pipeline(passes::Level::All)) {
        names.push_back(name);
        if (name == after) break;
    }
    if (names.empty() || names.back() != after) names = {after};
    passes::PassManager pm;
    for (const auto& name : names) pm.addPass(name);
    passes::PipelineOptions po;
    po.keepSnapshots = false;
    pm.run(model, po);
}

}  // namespace

REGISTER_COMMAND({
    "render",
    "render MODEL -o OUT.(svg|png|dot) [--no-fold] [--after PASS] [--depth N] [--expand PATH]... [--expand-all]",
    "Draws the graph headless with the app's layout, colors and folded constants. Large graphs are drawn\n"
    "through their hierarchy (name scopes, or repeated blocks): collapsed groups are one box; --depth N\n"
    "opens N levels, --expand PATH opens one group (e.g. encoder/layer.3), --expand-all opens every group.",
    {"-o", "--after", "--depth", "--expand"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"-o", "--no-fold", "--after", "--depth", "--expand", "--expand-all"});
        if (args.flag("--expand-all")) args.refuse("--depth", "does not apply with --expand-all (every group is open)");
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
        if (auto after = args.option("--after")) runPipelineUpTo(model, *after);
        // The drawing (whole graph, or through the hierarchy when large): core/layout/RenderModel.
        layout::RenderModelOptions ro;
        ro.foldConstants = !args.flag("--no-fold");
        if (args.option("--depth")) ro.depth = int(std::min<uint64_t>(args.unsignedOption("--depth", 0), 1000));
        ro.expand = args.options("--expand");
        ro.expandAll = args.flag("--expand-all");
        const auto r = layout::renderModel(model, ro, format, o);
        if (!r.hierarchical) {
            out << "wrote " << o << " (" << r.boxes << " boxes, " << r.edges << " edges)\n";
            return 0;
        }
        out << "wrote " << o << " (" << r.boxes << " boxes, " << r.edges << " edges, " << r.openGroups
            << " open groups of " << r.groups << ", grouped by " << r.groupedBy << ")\n";
        if (!r.fallbackReason.empty()) err << "note: simple layered placement used: " << r.fallbackReason << "\n";
        return 0;
    }});

}  // namespace passlens::cli
