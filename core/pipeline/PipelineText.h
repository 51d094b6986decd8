#pragma once
// One textual pipeline syntax for the CLI (--pipeline, --passes), the Python module (pipeline=)
// and the app's stepper, as MLIR's pass pipelines:
//
//   basic,layout{to=NHWC},transpose,version-convert{opset=18}
//
// Elements are separated by commas. An element is a level (none|basic|extended|all: its passes
// from the table, core/pipeline/PassTable.def), a pass, or a pass with option values in braces,
// several separated by spaces (`autodiff{loss=none wrt=x,w}`). A pass with exactly one option also
// takes its value after a colon (`layout:NHWC` = `layout{to=NHWC}`). The options are those the pass
// declares (`passlens-cli passes` lists them).
#include <string>
#include <vector>

#include "passes/PassManager.h"
#include "passes/PassRegistry.h"

namespace passlens::passes {

/// One step of a parsed pipeline: a pass and the option values given to it.
struct PipelineElement {
    std::string pass;
    PassArgs args;
};

/// Parses and checks pipeline text: levels expanded, every pass and option value checked. Throws
/// BadInput naming the element: an unknown pass or option, a bad value, a brace left open.
std::vector<PipelineElement> parsePipeline(const std::string& text, const PassRegistry& registry = PassRegistry::global());
/// Appends the passes of `text` to `pm` (resolved in pm's registry).
void addPipeline(PassManager& pm, const std::string& text);
/// The canonical text of parsed elements ("layout{to=NHWC},transpose").
std::string pipelineText(const std::vector<PipelineElement>& elements);

}  // namespace passlens::passes
