// The catalog of every pass of the project. It lives above passes and autodiff (the gradient
// pass is built on the Rewriter, so passes cannot name it without a module cycle).
#include "autodiff/AutodiffPass.h"
#include "autodiff/Recompute.h"
#include "passes/PassRegistry.h"
#include "passes/fusion/FusionPasses.h"
#include "passes/fusion/GroupFunctions.h"
#include "passes/layout/LayoutPasses.h"

namespace passlens::passes {

const PassRegistry& PassRegistry::global() {
    static const PassRegistry reg = [] {
        PassRegistry r;
        registerBasicPasses(r);
        registerFusionPasses(r);
        registerGroupFunctionsPass(r);
        registerLayoutPasses(r);
        autodiff::registerAutodiffPass(r);
        autodiff::registerRecomputePass(r);
        return r;
    }();
    return reg;
}

}  // namespace passlens::passes
