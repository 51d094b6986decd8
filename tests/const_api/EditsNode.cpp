// expect-error: discards qualifiers|drops 'const' qualifier|read-only|const-qualified|but function is not marked const|but method is not marked const
// A pass may not retype a node in place: nodes reached through the Rewriter are const.
#include "passes/Pass.h"

namespace {
using namespace passlens;

class RetypesNode : public passes::Pass {
public:
    std::string name() const override { return "retypes-node"; }
    std::string description() const override { return "mutates a node directly"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        passes::Rewriter& rw = ctx.rewriter();
        for (ir::NodeId n : rw.graph().nodeOrder()) rw.graph().node(n).opType = "Relu";
    }
};
}  // namespace

int main() { return RetypesNode().name().empty() ? 1 : 0; }
