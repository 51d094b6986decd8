// The catalog of every pass of the project: the rows of PassTable.def, then the onnxruntime
// profile's passes. It lives above passes and autodiff (the gradient pass is built on the
// Rewriter, so passes cannot name it without a module cycle).
#include <memory>

#include "passes/PassRegistry.h"
#include "passes/onnxruntime/OrtPasses.h"

// Each row's factory, declared where its pass file defines it.
#define PASSLENS_PASS(ns, factory, level, role) \
    namespace passlens::ns {                    \
    std::unique_ptr<::passlens::passes::Pass> factory(); \
    }
#include "pipeline/PassTable.def"
#undef PASSLENS_PASS

namespace passlens::passes {

const PassRegistry& PassRegistry::global() {
    static const PassRegistry reg = [] {
        PassRegistry r;
#define PASSLENS_PASS(ns, factory, level, role) r.add(Level::level, PassRole::role, &::passlens::ns::factory);
#include "pipeline/PassTable.def"
#undef PASSLENS_PASS
        ort::registerOnnxRuntimePasses(r);
        return r;
    }();
    return reg;
}

}  // namespace passlens::passes
