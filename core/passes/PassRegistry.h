#pragma once
// Creates passes by name and maps --level to a pipeline. The project's passes and their order are
// data: one table, core/pipeline/PassTable.def (a row: the pass's factory, the lowest level that
// runs it, its role), read by PassRegistry::global() in core/pipeline/PassCatalog.cpp. A pass file
// defines its class and a make<Name>Pass() factory; nothing else names it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "passes/Pass.h"

namespace passlens::passes {

/// Optimization levels; each includes the ones before it.
enum class Level { None = 0, Basic = 1, Extended = 2, All = 3 };
/// "none|basic|extended|all" → Level; throws BadInput naming the valid levels.
Level parseLevel(const std::string& s);
std::string_view levelName(Level l);
/// True for "none", "basic", "extended" and "all".
bool isLevelName(const std::string& s);

/// What a pass does, for the readers of a pipeline: explain collects the remarks of Fusion passes,
/// `passes --json` lists the role.
enum class PassRole {
    Convert,   ///< changes the opset (version-convert)
    Simplify,  ///< folds and removes (constant folding, algebraic, cse, dce)
    Fusion,    ///< pattern fusions and function grouping
    Layout,    ///< data layout and Transposes
    Training,  ///< builds or rewrites a training graph (autodiff, recompute)
    Profile,   ///< stands for another optimizer's transformer (the onnxruntime profile)
};
std::string_view roleName(PassRole r);

using PassFactory = std::function<std::unique_ptr<Pass>()>;

struct PassInfo {
    std::string name;
    std::string description;
    Level level = Level::None;  ///< lowest level whose pipeline includes it (None: only by name)
    PassRole role = PassRole::Simplify;
    std::vector<PassOption> options;
    PassFactory factory;
};

class PassRegistry {
public:
    /// Adds the pass `factory` makes; its name, description and options come from the pass itself.
    /// A level's pipeline runs the passes of that level and below in the order they were added.
    void add(Level level, PassRole role, std::unique_ptr<Pass> (*factory)());
    /// Adds a pass whose name and description are not fixed by its class (one class, many passes).
    void add(std::string name, std::string description, Level level, PassRole role, PassFactory factory);
    /// Adds a pass of another registry (a registry with a subset of the passes).
    void add(const PassInfo& info);
    bool contains(const std::string& name) const;
    /// The pass called `name`, or null.
    const PassInfo* find(const std::string& name) const;
    /// Throws BadInput "unknown pass 'x'; valid passes: a, b, c".
    std::unique_ptr<Pass> create(const std::string& name) const;
    const std::vector<PassInfo>& passes() const { return passes_; }
    std::vector<std::string> names() const;
    /// Pass names of the pipeline for `level`, in order.
    std::vector<std::string> pipeline(Level level) const;

    /// The registry with every pass of the project (built once from core/pipeline/PassTable.def).
    /// Defined by the `pipeline` module (core/pipeline/PassCatalog.cpp), which sits above passes
    /// and autodiff: nothing in core/passes may call it (the table names the autodiff passes).
    static const PassRegistry& global();

private:
    std::vector<PassInfo> passes_;
};

}  // namespace passlens::passes
