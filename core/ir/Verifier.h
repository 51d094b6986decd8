#pragma once
// Structural checks on the IR: acyclic, every read defined (in this graph or an enclosing one),
// one producer per value, unique node-output names, outputs defined. Passes run it after every
// change; import runs it once. Problems come back as sentences that name the node and value.
#include <string>
#include <vector>

#include "ir/Model.h"

namespace passlens::ir {

struct VerifyResult {
    std::vector<std::string> problems;
    bool ok() const { return problems.empty(); }
};

VerifyResult verifyGraph(const Graph& g);
VerifyResult verifyModel(const Model& m);
/// Throws Error(BadInput) with the first problem.
void verifyOrThrow(const Model& m);

}  // namespace passlens::ir
