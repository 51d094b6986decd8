// The catalog of every pass of the project. It lives above passes and autodiff (the gradient
// pass is built on the Rewriter, so passes cannot name it without a module cycle).
#include "autodiff/AutodiffPass.h"
#include "autodiff/Recompute.h"
#include "passes/PassRegistrations.h"

namespace passlens::passes {

const PassRegistry& PassRegistry::global() {
    static const PassRegistry reg = [] {
        PassRegistry r;
        registerAllPasses(r);
        autodiff::registerAutodiffPass(r);
        autodiff::registerRecomputePass(r);
        return r;
    }();
    return reg;
}

}  // namespace passlens::passes
