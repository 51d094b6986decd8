#include "passes/PassRegistry.h"
#include "passes/basic/BasicPasses.h"

namespace passlens::passes {

void registerBasicPasses(PassRegistry& r) {
    r.add({"constant-folding", ConstantFolding().description(), Level::Basic, 10, [] { return std::make_unique<ConstantFolding>(); }});
    r.add({"algebraic", AlgebraicSimplification().description(), Level::Basic, 20, [] { return std::make_unique<AlgebraicSimplification>(); }});
    r.add({"cse", CommonSubexpressionElimination().description(), Level::Basic, 30, [] { return std::make_unique<CommonSubexpressionElimination>(); }});
    r.add({"dce", DeadCodeElimination().description(), Level::Basic, 40, [] { return std::make_unique<DeadCodeElimination>(); }});
}

}  // namespace passlens::passes
