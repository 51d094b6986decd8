// Fixture for the core_layering_rejects test: the interpreter reaching up into the passes, the
// cycle core/Layering.cmake forbids. Never compiled.
#include "ir/Graph.h"
#include "passes/Pass.h"
