#pragma once
// What other modules need from libonnx's operator schemas, without its headers: core/onnx is the
// only module that includes libonnx (the layering check enforces it).
#include <cstdint>
#include <string>
#include <vector>

#include "ir/Attribute.h"

namespace passlens::onnxio {

/// The formal name of input `slot` of ai.onnx `opType` at `opset` ("X", "W", "B" for Conv); past
/// the last formal input, a variadic one names every further slot. "" when there is no schema.
std::string schemaInputName(const std::string& opType, int64_t opset, size_t slot);

/// The attributes to which the latest schema of `domain`.`opType` gives a default, with that
/// default as value (only the kinds a default can have: float, int, string and their lists).
std::vector<ir::Attribute> schemaAttributeDefaults(const std::string& domain, const std::string& opType);

}  // namespace passlens::onnxio
