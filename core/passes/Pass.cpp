#include "passes/Pass.h"

#include <chrono>

#include "ir/Error.h"
#include "ir/Verifier.h"
#include "onnx/ShapeInference.h"

namespace passlens::passes {

using namespace passlens::ir;

size_t countNodesDeep(const Graph& g) {
    size_t n = 0;
    g.forEachGraph([&](const Graph& sg) { n += sg.nodeCount(); });
    return n;
}

PassContext::PassContext(Model& model, const PassOptions& options, const Pass& pass, PassResult& result)
    : model_(model), options_(options), pass_(pass), result_(result) {}

static void visitGraphs(Graph& g, const std::string& path, const std::function<void(Graph&, const std::string&)>& f) {
    for (NodeId n : g.nodesWithSubgraphs()) {
        Node& node = g.node(n);
        for (auto& a : node.attributes) {
            if (!a.g && a.graphs.empty()) continue;
            std::string sub = (path.empty() ? "" : path + "/") + node.displayName() + "/" + a.name;
            if (a.g) visitGraphs(*a.g, sub, f);
            for (size_t i = 0; i < a.graphs.size(); ++i) visitGraphs(*a.graphs[i], sub + "[" + std::to_string(i) + "]", f);
        }
    }
    f(g, path);
}

Rewriter& PassContext::rewriterFor(const Graph& g, const std::string& graphPath) {
    for (auto& [graph, rw] : rewriters_)
        if (graph == &g) return *rw;
    // Passes see the model const; the context finds the mutable graph by identity in its model,
    // so a rewriter can only ever edit a graph of the model being transformed.
    Graph* mutableGraph = nullptr;
    visitGraphs(model_.graph, "", [&](Graph& candidate, const std::string&) {
        if (&candidate == &g) mutableGraph = &candidate;
    });
    if (!mutableGraph)
        throw Error(ErrorKind::Internal, "pass '" + pass_.name() + "' asked for a rewriter of a graph outside its model");
    rewriters_.emplace_back(mutableGraph, std::make_unique<Rewriter>(model_, *mutableGraph, pass_.name(), graphPath,
                                                                     result_.changes, result_.remarks));
    return *rewriters_.back().second;
}

void PassContext::forEachGraph(const std::function<void(Rewriter&)>& f) {
    visitGraphs(model_.graph, "", [&](Graph& g, const std::string& path) {
        checkCancelled();
        f(rewriterFor(g, path));
    });
}

void PassContext::checkCancelled() const {
    if (options_.cancel && options_.cancel->load()) throw Error(ErrorKind::Cancelled, "cancelled");
}

bool PassContext::inferShapes() {
    // A failure leaves the types as they were and is a missed remark the user sees (it used to be
    // dropped); a broken pass (Internal) and cancellation still propagate.
    auto missed = [&](const std::string& what) {
        Remark r;
        r.kind = RemarkKind::Missed;
        r.pass = pass_.name();
        r.rule = "shape-inference";
        r.message = "shape inference failed, value types stay as they were: " + what;
        result_.remarks.push_back(std::move(r));
        return false;
    };
    try {
        refineValueTypes([](Model& m) { onnxio::inferShapes(m); });
        return true;
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Cancelled) throw;
        return missed(e.what());
    } catch (const std::exception& e) {
        return missed(e.what());
    }
}

void PassContext::refineValueTypes(const std::function<void(Model&)>& refine) {
    const size_t nodes = countNodesDeep(model_.graph), values = model_.graph.valueIds().size();
    const size_t functions = model_.functions.size(), opsets = model_.opsetImports.size();
    refine(model_);
    if (countNodesDeep(model_.graph) != nodes || model_.graph.valueIds().size() != values ||
        model_.functions.size() != functions || model_.opsetImports.size() != opsets)
        throw Error(ErrorKind::Internal, "pass '" + pass_.name() + "' changed more than value types in refineValueTypes");
}

PassResult Pass::run(Model& model, const PassOptions& options) const {
    PassResult result;
    result.name = name();
    result.nodesBefore = countNodesDeep(model.graph);
    auto start = std::chrono::steady_clock::now();
    {
        PassContext ctx(model, options, *this, result);
        runImpl(ctx);
    }
    result.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.nodesAfter = countNodesDeep(model.graph);
    result.changed = !result.changes.empty();
    // Every edit goes through the Rewriter, which records it, so a pass with no change left the
    // graph as it found it: the structural check runs after the passes that changed something.
    if (options.verifyStructure && result.changed) {
        VerifyResult v = verifyModel(model);
        if (!v.ok())
            throw Error(ErrorKind::Internal, "pass '" + name() + "' left a broken graph: " + v.problems.front());
    }
    return result;
}

}  // namespace passlens::passes
