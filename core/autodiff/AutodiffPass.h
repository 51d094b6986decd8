#pragma once
// The `autodiff` pass: builds the training graph (loss + backward) as one pipeline step, so the
// stepper shows every backward node as "added", with "came from: <forward node>".
// Options (PassOptions::params): autodiff.loss (mse|cross-entropy|none, default mse),
// autodiff.output (default: the first output), autodiff.wrt ("all" or "a,b,c", default all).
#include <memory>

#include "autodiff/Autodiff.h"
#include "passes/PassRegistry.h"

namespace passlens::autodiff {

std::unique_ptr<passes::Pass> makeAutodiffPass();
/// A pass with fixed options (the app's Build Training Graph); autodiff.* params still win.
std::unique_ptr<passes::Pass> makeAutodiffPass(const AutodiffOptions& defaults);
/// Reads autodiff.* from pass params (defaults where absent); BadInput for unknown keys' values.
AutodiffOptions optionsFromParams(const std::map<std::string, std::string>& params, AutodiffOptions defaults = {});
/// The same options as pass params.
std::map<std::string, std::string> paramsFromOptions(const AutodiffOptions& o);

}  // namespace passlens::autodiff
