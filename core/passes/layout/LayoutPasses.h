#pragma once
// Layout transformation (NCHW <-> NHWC) and transpose optimization. The channels-last domain
// the layout pass writes is declared in ir/NhwcDomain.h.
#include <memory>
#include <string>
#include <vector>

#include "ir/Model.h"
#include "passes/Pass.h"
#include "passes/PassRegistry.h"
#include "ir/NhwcDomain.h"

namespace passlens::passes {

// The domain is declared in the IR; passes and their tests name it unqualified.
using ir::isNhwcOp;
using ir::kNhwcDomain;
using ir::kNhwcDomainVersion;
using ir::nhwcOps;

/// `transpose`: cancels, composes, folds and pushes Transposes through layout-agnostic ops.
std::unique_ptr<Pass> makeTransposePass();
/// `layout`: rewrites layout-sensitive ops to PassOptions::targetLayout ("NHWC" or "NCHW").
std::unique_ptr<Pass> makeLayoutPass();



/// Domains used by nodes of the model (any graph) that are not standard ONNX ("" / ai.onnx /
/// ai.onnx.ml); e.g. {"passlens.nhwc"} after the layout pass. Empty = standard ONNX.
std::vector<std::string> nonStandardDomains(const ir::Model& m);
inline bool usesNonStandardDomains(const ir::Model& m) { return !nonStandardDomains(m).empty(); }

}  // namespace passlens::passes
