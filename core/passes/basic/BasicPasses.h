#pragma once
// The basic pipeline: constant folding, CSE, DCE and algebraic simplification.
#include "passes/Pass.h"

namespace passlens::passes {

class DeadCodeElimination : public Pass {
public:
    std::string name() const override { return "dce"; }
    std::string description() const override { return "Removes nodes whose outputs reach no graph output, unused initializers and functions"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

class CommonSubexpressionElimination : public Pass {
public:
    std::string name() const override { return "cse"; }
    std::string description() const override { return "Merges identical constants, then nodes computing the same op on the same inputs"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

class ConstantFolding : public Pass {
public:
    std::string name() const override { return "constant-folding"; }
    std::string description() const override { return "Evaluates nodes whose inputs are all constant (and Shape/Size of static shapes) with the interpreter"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

class AlgebraicSimplification : public Pass {
public:
    std::string name() const override { return "algebraic"; }
    std::string description() const override { return "Applies identities such as x+0, x*1, Neg(Neg x), no-op Cast/Reshape/Transpose"; }
protected:
    void runImpl(PassContext& ctx) const override;
};

}  // namespace passlens::passes
