#include <nlohmann/json.hpp>
#include <ostream>

#include "analysis/Dominators.h"
#include "cli/Command.h"
#include "onnx/Import.h"

namespace passlens::cli {

namespace {
std::string label(const ir::Graph& g, ir::NodeId n, bool post) {
    if (n == ir::kNone) return post ? "<exit>" : "<entry>";
    const auto& node = g.node(n);
    return (node.name.empty() ? "#" + std::to_string(n) : node.name) + " (" + node.opType + ")";
}
}  // namespace

REGISTER_COMMAND({
    "domtree", "domtree MODEL [--post] [--format json|dot|text]",
    "Dominator (or, with --post, post-dominator) tree of the top-level graph: immediate (post-)dominator per node.",
    {"--format"},
    [](const Args& args, std::ostream& out, std::ostream& err) {
        args.expectOnly({"--post", "--format"});
        args.noteNoEffect("--dim", "does not apply to domtree: the tree depends on the edges, not the shapes", err);
        std::string format = args.option("--format").value_or("text");
        if (format != "json" && format != "dot" && format != "text")
            throw UsageError{"--format must be json, dot or text, got '" + format + "'"};
        onnxio::ImportOptions options;
        options.pinnedDims = args.dims();
        auto model = onnxio::importModelFile(args.positional(0, "MODEL"), options);
        bool post = args.flag("--post");
        const auto& g = model.graph;
        auto tree = analysis::DominatorTree::build(g, post);
        if (format == "json") {
            nlohmann::ordered_json j;
            j["kind"] = post ? "post-dominator" : "dominator";
            j["root"] = post ? "<exit>" : "<entry>";
            auto nodes = nlohmann::ordered_json::array();
            for (auto n : tree.nodes()) {
                auto d = tree.idom(n);
                nodes.push_back({{"id", n}, {"name", g.node(n).name}, {"op", g.node(n).opType},
                                 {"idom", d == ir::kNone ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d)},
                                 {"idom_name", d == ir::kNone ? j["root"].get<std::string>() : g.node(d).name}});
            }
            j["nodes"] = nodes;
            out << j.dump(2) << "\n";
        } else if (format == "dot") {
            out << "digraph " << (post ? "postdomtree" : "domtree") << " {\n  root [label=\""
                << (post ? "<exit>" : "<entry>") << "\" shape=box];\n";
            for (auto n : tree.nodes()) {
                out << "  n" << n << " [label=" << nlohmann::json(label(g, n, post)).dump() << "];\n";
                auto d = tree.idom(n);
                out << "  " << (d == ir::kNone ? std::string("root") : "n" + std::to_string(d)) << " -> n" << n << ";\n";
            }
            out << "}\n";
        } else {
            for (auto n : tree.nodes())
                out << label(g, n, post) << "  <-  " << label(g, tree.idom(n), post) << "\n";
        }
        (void)err;
        return 0;
    }});

}  // namespace passlens::cli
