#pragma once
// JSON and text forms of a memory plan (CLI output, UI export).
#include <string>

#include <nlohmann/json.hpp>

#include "memory/MemoryPlan.h"

namespace passlens::memory {

nlohmann::ordered_json planToJson(const MemoryPlan& plan);
/// Human summary; `others` (may be empty) are the same lifetimes under other planners.
std::string planToText(const MemoryPlan& plan, const std::vector<MemoryPlan>& others);

}  // namespace passlens::memory
