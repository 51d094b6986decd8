#include "passes/BasicPasses.h"
#include "passes/PassRegistry.h"

namespace passlens::passes {

void registerBasicPasses(PassRegistry& reg) {
    reg.add("constant-folding", "Evaluates nodes whose inputs are all constant; Constant nodes become initializers",
            Level::Basic, 100, makeConstantFoldingPass);
    // Before constant-folding, so a ConstantOfShape, Range or Expand whose shape input it makes
    // constant folds in the same run.
    reg.add("shape-chain-folding", "Folds static dims read through Shape of symbolically shaped values; merges Shape nodes of equal shapes",
            Level::Basic, 95, makeShapeChainFoldingPass);
    reg.add("algebraic", "Removes no-op arithmetic and identity-like nodes (x+0, x*1, Identity, Dropout, ...)",
            Level::Basic, 110, makeAlgebraicPass);
    reg.add("cse", "Merges nodes and initializers that compute the same value", Level::Basic, 120, makeCsePass);
    reg.add("dce", "Removes nodes, initializers and functions that reach no graph output", Level::Basic, 130, makeDcePass);
}

}  // namespace passlens::passes
