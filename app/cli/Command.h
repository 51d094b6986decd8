#pragma once
// passlens-cli commands. Each command lives in its own cmd_*.cpp and registers itself with
// REGISTER_COMMAND; runCommandLine (Dispatch.cpp) only dispatches. Exit codes: 0 ok, 1 a check failed, 2 bad input/usage.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace passlens::cli {

enum ExitCode { kOk = 0, kCheckFailed = 1, kBadInput = 2 };

/// Parsed arguments: positionals, flags (--json) and options (--planner NAME, repeatable).
class Args {
public:
    /// `valueOptions` lists the options that take a value; anything else starting with -- is a flag.
    Args(std::vector<std::string> argv, const std::vector<std::string>& valueOptions);
    const std::vector<std::string>& positionals() const { return positionals_; }
    bool flag(const std::string& name) const;
    std::optional<std::string> option(const std::string& name) const;
    std::vector<std::string> options(const std::string& name) const;
    /// --dim NAME=VALUE pairs (every command accepts them).
    std::vector<std::pair<std::string, int64_t>> dims() const;
    /// Throws a usage error for flags/options the command does not know.
    void expectOnly(const std::vector<std::string>& known) const;
    /// Throws a usage error naming `name` when it is given: an option the command declares (or
    /// every command takes, like --dim) that would change nothing here; `why` says so.
    void refuse(const std::string& name, const std::string& why) const;
    /// For --dim, which every command takes (the CLI contract): where it changes nothing, a note
    /// on `err` says so instead of a refusal.
    void noteNoEffect(const std::string& name, const std::string& why, std::ostream& err) const;
    /// The positional at `i`, or a usage error naming `what`.
    const std::string& positional(size_t i, const std::string& what) const;
    /// A non-negative integer option (e.g. --seed), `dflt` when absent; a usage error otherwise.
    uint64_t unsignedOption(const std::string& name, uint64_t dflt) const;
    /// A non-negative real option (e.g. --rtol), `dflt` when absent; a usage error otherwise.
    double nonNegativeOption(const std::string& name, double dflt) const;

private:
    std::vector<std::string> positionals_;
    std::multimap<std::string, std::string> options_;
    std::vector<std::string> flags_;
};

struct Command {
    std::string name;
    std::string usage;      ///< "info MODEL [--json]"
    std::string summary;
    std::vector<std::string> valueOptions;  ///< options that take a value, e.g. "--planner"
    std::function<int(const Args&, std::ostream& out, std::ostream& err)> run;
};

std::map<std::string, Command>& commandRegistry();

struct CommandRegistrar {
    explicit CommandRegistrar(Command c) { commandRegistry()[c.name] = std::move(c); }
};

/// Runs one command line (argv without the program name): parses, dispatches and maps errors to
/// the exit code, writing the command's output to `out` and messages to `err`. passlens-cli's
/// main() is this on std::cout / std::cerr; the tests call it in-process.
int runCommandLine(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

/// Usage problem: the dispatch prints it with the command's usage; exit 2.
struct UsageError {
    std::string message;
};

}  // namespace passlens::cli

#define PASSLENS_CONCAT2(a, b) a##b
#define PASSLENS_CONCAT(a, b) PASSLENS_CONCAT2(a, b)
#define REGISTER_COMMAND(...) \
    static ::passlens::cli::CommandRegistrar PASSLENS_CONCAT(passlensCommand_, __LINE__)(::passlens::cli::Command __VA_ARGS__)
