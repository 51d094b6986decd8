#pragma once
// Structural equality of attributes and (sub)graphs, shared by CSE (merging equal computations),
// group-functions (reusing a function with an equal body) and version-convert (was a node
// changed?). Floats compare by their bits and tensors by their contents, never through text.
#include <string>
#include <vector>

#include "ir/Graph.h"

namespace passlens::passes {

struct GraphEquality {
    /// CSE's sense: a random op never equals another (two draws differ). Off for "is this the
    /// same definition" questions (function bodies, a node before and after conversion).
    bool randomOpsDiffer = false;
};

/// Same names, kinds and values, in any order. Graph attributes compare with sameGraph; kinds
/// kept as opaque bytes (sparse tensors, type protos) are never assumed equal.
bool sameAttributes(const std::vector<ir::Attribute>& a, const std::vector<ir::Attribute>& b,
                    const GraphEquality& options = {});

/// Structural equality of two graphs: values matched by position (inputs, node outputs, outputs),
/// initializers by contents, outer-scope captures by name. Order-sensitive on purpose (two bodies
/// that differ only in node order count as different).
bool sameGraph(const ir::Graph& a, const ir::Graph& b, const GraphEquality& options = {});

/// A key equal for attributes sameAttributes calls equal (scalars and lists; tensor attributes
/// are keyed by identity, so distinct tensors never share a key). For hashing nodes in CSE.
std::string attributeKey(const ir::Attribute& a);

}  // namespace passlens::passes
