#include "eval/MemoryBudget.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "eval/TensorOps.h"
#include "ir/Error.h"
#include "ir/Type.h"
#include "ir/CheckedMath.h"

namespace passlens::eval {

namespace {
thread_local int64_t tBudget = 0;  // 0 = default
}

int64_t defaultMemoryBudget() {
    static const int64_t budget = [] {
        const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
        const int64_t physical = pages > 0 && pageSize > 0 ? int64_t(pages) * pageSize : int64_t(8) << 30;
        return std::max<int64_t>(physical / 2, int64_t(256) << 20);
    }();
    return budget;
}

int64_t currentMemoryBudget() { return tBudget > 0 ? tBudget : defaultMemoryBudget(); }

MemoryBudgetScope::MemoryBudgetScope(int64_t bytes) : saved_(tBudget) {
    if (bytes > 0) tBudget = bytes;
}

MemoryBudgetScope::~MemoryBudgetScope() { tBudget = saved_; }

std::string byteText(int64_t bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

int64_t checkedAllocation(const std::vector<int64_t>& dims, size_t elementSize) {
    auto bytes = ir::checkedProduct(dims, static_cast<int64_t>(elementSize));
    if (!bytes) throwBadInput("tensor " + shapeText(dims) + ": byte size overflows int64");
    const int64_t budget = currentMemoryBudget();
    if (*bytes > budget)
        throwBadInput("tensor " + shapeText(dims) + " needs " + byteText(*bytes) + ", more than the interpreter's memory budget of " +
                      byteText(budget) + " (--max-memory)");
    return *bytes;
}

}  // namespace passlens::eval
