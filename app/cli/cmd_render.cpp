#include <ostream>

#include "cli/Command.h"
#include "hierarchy/Hierarchy.h"
#include "ir/Error.h"
#include "layout/DisplayGraph.h"
#include "layout/HierarchicalLayout.h"
#include "layout/Layout.h"
#include "onnx/Import.h"
#include "passes/PassManager.h"

namespace passlens::cli {

namespace {

/// Drawings up to this many boxes are one Graphviz layout, as they always were.
constexpr size_t kWholeGraphBoxes = 300;
/// The default depth shows as many hierarchy levels as fit in this many boxes.
constexpr size_t kDefaultBoxBudget = 60;

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
        layout::DisplayOptions display;
        display.foldConstants = !args.flag("--no-fold");
        display.opset = model.opsetFor("") ? model.opsetFor("") : 17;
        auto dg = layout::buildDisplayGraph(model.graph, display);

        const bool steered = args.option("--depth") || !args.options("--expand").empty() || args.flag("--expand-all");
        if (dg.nodes.size() <= kWholeGraphBoxes && !steered) {
            layout::renderWithGraphviz(layout::toLayoutRequest(dg, nullptr, true), format, o);
            out << "wrote " << o << " (" << dg.nodes.size() << " boxes, " << dg.edges.size() << " edges)\n";
            return 0;
        }
        auto h = std::make_shared<hierarchy::Hierarchy>(hierarchy::buildHierarchy(model.graph));
        layout::Expansion expanded;
        if (args.flag("--expand-all")) expanded = layout::expansionToDepth(*h, 1 << 20);
        else if (args.option("--depth")) expanded = layout::expansionToDepth(*h, int(std::min<uint64_t>(args.unsignedOption("--depth", 0), 1000)));
        else if (args.options("--expand").empty()) expanded = layout::expansionWithinBudget(*h, dg, kDefaultBoxBudget);
        else expanded = layout::expansionToDepth(*h, 0);
        for (const auto& path : args.options("--expand")) {
            auto g = h->findPath(path);
            if (!g) {
                std::string known;
                for (hierarchy::GroupId c : h->root().children) known += (known.empty() ? "" : ", ") + h->group(c).path;
                throw Error(ErrorKind::BadInput, "render --expand: no group '" + path + "' (top-level groups: " + known + ")");
            }
            expanded = layout::withPathTo(*h, std::move(expanded), *g);
        }
        layout::HierarchicalLayouter layouter(h, std::move(dg), nullptr);
        auto drawing = layouter.draw(expanded);
        std::vector<layout::PlacedFrame> frames;
        for (const auto& f : drawing.frames) frames.push_back({layout::groupKey(f.group), f.rect, f.label});
        layout::renderPlaced(layout::toLayoutRequest(drawing.display, nullptr, true), drawing.layout, frames, format, o);
        out << "wrote " << o << " (" << drawing.display.nodes.size() << " boxes, " << drawing.display.edges.size()
            << " edges, " << drawing.frames.size() << " open groups of " << h->groups.size() - 1 << ", grouped by "
            << hierarchy::sourceName(h->naming) << ")\n";
        if (!drawing.fallbackReason.empty()) err << "note: simple layered placement used: " << drawing.fallbackReason << "\n";
        return 0;
    }});

}  // namespace passlens::cli
