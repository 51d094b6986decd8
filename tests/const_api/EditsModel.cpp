// expect-error: discards qualifiers|drops 'const' qualifier|read-only|const-qualified|but function is not marked const
// A pass may not edit the model's opset imports or functions directly: model() is const.
#include "passes/Pass.h"

namespace {
using namespace passlens;

class DropsOpsets : public passes::Pass {
public:
    std::string name() const override { return "drops-opsets"; }
    std::string description() const override { return "mutates the model directly"; }

protected:
    void runImpl(passes::PassContext& ctx) const override { ctx.model().opsetImports.clear(); }
};
}  // namespace

int main() { return DropsOpsets().name().empty() ? 1 : 0; }
