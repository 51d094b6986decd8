#pragma once
// Creates passes by name and maps --level to a pipeline. Each pass registers itself in its own
// file (a registerXxxPass function calling add<P>(level, order), so its name and description are
// stated once, in the class); core/pipeline/PassCatalog.cpp calls every one of them, listed in
// passes/PassRegistrations.h. The list is explicit because static self-registration objects are
// dropped by the linker from a static library.
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

using PassFactory = std::function<std::unique_ptr<Pass>()>;

struct PassInfo {
    std::string name;
    std::string description;
    Level level = Level::All;  ///< lowest level whose pipeline includes it (None: only by --passes)
    int order = 0;             ///< position within pipelines (ascending; ties keep registration order)
    PassFactory factory;
};

class PassRegistry {
public:
    /// Adds a pass. `level` tags the lowest pipeline that includes it; `order` places it
    /// (basic passes use 100..199, fusion 200..299, layout 300..399).
    void add(std::string name, std::string description, Level level, int order, PassFactory factory);
    /// Adds pass class P: its name and description come from P itself.
    template <class P>
    void add(Level level, int order) {
        const P probe;
        add(probe.name(), probe.description(), level, order, [] { return std::make_unique<P>(); });
    }
    bool contains(const std::string& name) const;
    /// Throws BadInput "unknown pass 'x'; valid passes: a, b, c".
    std::unique_ptr<Pass> create(const std::string& name) const;
    const std::vector<PassInfo>& passes() const { return passes_; }
    std::vector<std::string> names() const;
    /// Pass names of the pipeline for `level`, in order.
    std::vector<std::string> pipeline(Level level) const;

    /// The registry with every pass of the project (built once). Defined by the `pipeline` module
    /// (core/pipeline/PassCatalog.cpp), which sits above passes and autodiff: nothing in
    /// core/passes may call it (the autodiff pass is registered there, and autodiff needs passes).
    static const PassRegistry& global();

private:
    std::vector<PassInfo> passes_;
};

}  // namespace passlens::passes
