#pragma once
// Every pass by name, with the pipelines (levels) it belongs to. Registration is an explicit
// list (PassRegistry.cpp): a static library drops self-registering objects nobody references.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/Pass.h"

namespace passlens::passes {

enum class Level { None = 0, Basic = 1, Extended = 2, All = 3 };
/// "none" | "basic" | "extended" | "all"; throws BadInput otherwise.
Level parseLevel(const std::string& s);

struct PassInfo {
    std::string name;
    std::string description;
    Level level = Level::All;  ///< the lowest level whose pipeline includes it (None: only by name)
    int order = 0;             ///< position inside pipelines (ascending)
    std::function<std::unique_ptr<Pass>()> factory;
};

class PassRegistry {
public:
    static const PassRegistry& instance();
    void add(PassInfo info);
    /// Throws BadInput naming the valid passes when `name` is unknown.
    std::unique_ptr<Pass> create(const std::string& name) const;
    const PassInfo* find(const std::string& name) const;
    const std::vector<PassInfo>& passes() const { return passes_; }
    /// Pass names of a level's pipeline, in order.
    std::vector<std::string> pipeline(Level level) const;

private:
    std::vector<PassInfo> passes_;
};

/// The basic passes (constant folding, CSE, DCE, algebraic simplification).
void registerBasicPasses(PassRegistry& registry);

}  // namespace passlens::passes
