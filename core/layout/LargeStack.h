#pragma once
// Runs a function on a fresh thread with a large explicit stack and waits for it. Graphviz's `dot`
// recurses once per rank and per chain link; on long graphs that overflows a pooled thread's
// default 8 MB (or Qt's smaller) stack. The stack is reserved address space: untouched pages cost
// no memory.
#include <cstddef>
#include <functional>

namespace passlens::layout {

inline constexpr size_t kLargeStackBytes = size_t(512) << 20;

/// Calls `fn` on a new thread with `stackBytes` of stack and joins it; an exception thrown by `fn`
/// is rethrown here. Falls back to calling `fn` directly when no such thread can be created.
void runOnLargeStack(const std::function<void()>& fn, size_t stackBytes = kLargeStackBytes);

}  // namespace passlens::layout
