// expect: compiles
// The control case: a pass reads the model and graph and edits through the Rewriter.
#include "passes/Pass.h"

namespace {
using namespace passlens;

class RenamesRelu : public passes::Pass {
public:
    std::string name() const override { return "renames-relu"; }
    std::string description() const override { return "control case for the const API"; }

protected:
    void runImpl(passes::PassContext& ctx) const override {
        const int64_t opset = ctx.model().opsetFor("");
        passes::Rewriter& rw = ctx.rewriter();
        for (ir::NodeId n : rw.graph().nodeOrder())
            if (rw.graph().node(n).opType == "Relu" && opset > 0)
                rw.setAttribute(n, ir::Attribute::makeInt("checked", 1), "control case");
    }
};
}  // namespace

int main() { return RenamesRelu().name().empty() ? 1 : 0; }
