#pragma once
// Attribute defaults from the ONNX operator schemas, so that writing a default out (ONNX Runtime
// adds auto_pad="NOTSET" to every Conv it saves) is not reported as a change.
#include "ir/Attribute.h"

namespace passlens::diff {

/// True when `a` holds exactly the default the latest schema of `domain`.`opType` gives it.
/// Thread-safe (the compare view diffs on a worker thread).
bool isSchemaDefault(const std::string& domain, const std::string& opType, const ir::Attribute& a);

}  // namespace passlens::diff
