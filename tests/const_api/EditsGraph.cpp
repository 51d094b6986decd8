// expect-error: discards qualifiers|drops 'const' qualifier|const-qualified|but function is not marked const
// A pass may not add a value behind the Rewriter's back: graph() is const.
#include "passes/Pass.h"

namespace {
using namespace passlens;

class AddsValue : public passes::Pass {
public:
    std::string name() const override { return "adds-value"; }
    std::string description() const override { return "mutates the graph directly"; }

protected:
    void runImpl(passes::PassContext& ctx) const override { ctx.rewriter().graph().addValue("unrecorded"); }
};
}  // namespace

int main() { return AddsValue().name().empty() ? 1 : 0; }
