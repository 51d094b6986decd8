// Bodies of If/Loop/Scan are planned on their own: at the top level an If is one step whose reads
// include its captures; what happens inside is this body's plan.
#include "memory/MemoryPlan.h"

namespace passlens::memory {

namespace {
void visit(const ir::Model& m, const ir::Graph& g, const PlanOptions& o, const std::string& prefix,
           std::vector<SubgraphPlan>& out) {
    for (ir::NodeId n : g.nodeOrder()) {
        const auto& node = g.node(n);
        for (const auto& a : node.attributes) {
            std::vector<const ir::Graph*> bodies;
            if (a.g) bodies.push_back(a.g.get());
            for (const auto& sg : a.graphs) bodies.push_back(sg.get());
            for (size_t k = 0; k < bodies.size(); ++k) {
                std::string path = prefix + node.displayName() + "/" + a.name + (bodies.size() > 1 ? "[" + std::to_string(k) + "]" : "");
                out.push_back({path, planMemory(m, *bodies[k], o)});
                visit(m, *bodies[k], o, path + "/", out);
            }
        }
    }
}
}  // namespace

std::vector<SubgraphPlan> planSubgraphs(const ir::Model& m, const ir::Graph& g, const PlanOptions& options) {
    std::vector<SubgraphPlan> out;
    visit(m, g, options, "", out);
    return out;
}

}  // namespace passlens::memory
