#pragma once
// The interpreter's allocation budget: no single tensor it creates (node outputs, random inputs,
// constant-folding results) may be larger than the budget, so a model that would materialize
// gigabytes stops with an error naming the node instead of exhausting the machine's memory.
#include <cstdint>
#include <string>
#include <vector>

namespace passlens::eval {

/// Half of the physical memory (at least 256 MiB): the budget when nobody sets one.
int64_t defaultMemoryBudget();
/// The budget in force on this thread (the innermost MemoryBudgetScope, else the default).
int64_t currentMemoryBudget();

/// Sets this thread's budget while alive; 0 keeps the enclosing one. Scopes nest.
class MemoryBudgetScope {
public:
    explicit MemoryBudgetScope(int64_t bytes);
    ~MemoryBudgetScope();
    MemoryBudgetScope(const MemoryBudgetScope&) = delete;
    MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

private:
    int64_t saved_;
};

/// Throws Error(BadInput) when a tensor of these dims and element size would overflow int64 or
/// exceed the current budget; returns its byte size otherwise.
int64_t checkedAllocation(const std::vector<int64_t>& dims, size_t elementSize);

/// "16.0 GiB", "512 B".
std::string byteText(int64_t bytes);

}  // namespace passlens::eval
