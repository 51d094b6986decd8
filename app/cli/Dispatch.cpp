// The command line's dispatch: passlens-cli's main() and the tests (in-process, test::runCli) run
// the same code, so an argument list gives the same exit code and output either way.
#include <iostream>

#include "cli/Command.h"
#include "ir/Error.h"

#ifndef PASSLENS_VERSION
#define PASSLENS_VERSION "dev"
#endif

namespace passlens::cli {

namespace {

void printHelp(std::ostream& os) {
    os << "passlens-cli " PASSLENS_VERSION " — watch graph optimizations, headless\n\nusage: passlens-cli COMMAND ...\n\n";
    for (const auto& [name, c] : commandRegistry()) os << "  " << c.usage << "\n      " << c.summary << "\n";
    os << "\nEvery command accepts --dim NAME=VALUE (repeatable) to pin symbolic dimensions;\n"
          "convert, diff, domtree and passes note that it has no effect there.\n"
          "Exit codes: 0 success, 1 a check failed, 2 bad input or usage.\n";
}

}  // namespace

int runCommandLine(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
    if (argv.empty()) {
        printHelp(err);
        return kBadInput;
    }
    const std::string& name = argv[0];
    if (name == "--version" || name == "version") {
        out << "passlens-cli " PASSLENS_VERSION "\n";
        return kOk;
    }
    if (name == "--help" || name == "-h" || name == "help") {
        printHelp(out);
        return kOk;
    }
    auto it = commandRegistry().find(name);
    if (it == commandRegistry().end()) {
        err << "error: unknown command '" << name << "' (try passlens-cli --help)\n";
        return kBadInput;
    }
    const Command& cmd = it->second;
    try {
        Args args(std::vector<std::string>(argv.begin() + 1, argv.end()), cmd.valueOptions);
        if (args.flag("--help")) {
            out << "usage: passlens-cli " << cmd.usage << "\n" << cmd.summary << "\n";
            return kOk;
        }
        return cmd.run(args, out, err);
    } catch (const UsageError& e) {
        err << "error: " << e.message << "\nusage: passlens-cli " << cmd.usage << "\n";
        return kBadInput;
    } catch (const Error& e) {
        err << "error: " << e.what() << "\n";
        return e.kind() == ErrorKind::CheckFailed ? kCheckFailed : kBadInput;
    } catch (const std::bad_alloc&) {
        err << "error: out of memory\n";
        return kBadInput;
    } catch (const std::exception& e) {
        err << "error: " << e.what() << "\n";
        return kBadInput;
    }
}

}  // namespace passlens::cli
