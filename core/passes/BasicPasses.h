#pragma once
// The basic passes: dead-code elimination, common-subexpression elimination, constant folding
// and algebraic simplification. Each lives in its own .cpp; this header only makes them.
#include <memory>

#include "passes/Pass.h"

namespace passlens::passes {

std::unique_ptr<Pass> makeDcePass();
std::unique_ptr<Pass> makeCsePass();
std::unique_ptr<Pass> makeConstantFoldingPass();
std::unique_ptr<Pass> makeAlgebraicPass();
std::unique_ptr<Pass> makeShapeChainFoldingPass();

}  // namespace passlens::passes
