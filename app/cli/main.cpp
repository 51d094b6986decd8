// passlens-cli: the headless face of the engine. Thin: parse, dispatch, map errors to exit codes.
#include <iostream>

#include "cli/Command.h"
#include "ir/Error.h"

#ifndef PASSLENS_VERSION
#define PASSLENS_VERSION "dev"
#endif

using namespace passlens;
using namespace passlens::cli;

static void printHelp(std::ostream& os) {
    os << "passlens-cli " PASSLENS_VERSION " — watch graph optimizations, headless\n\nusage: passlens-cli COMMAND ...\n\n";
    for (const auto& [name, c] : commandRegistry()) os << "  " << c.usage << "\n      " << c.summary << "\n";
    os << "\nEvery command accepts --dim NAME=VALUE (repeatable) to pin symbolic dimensions;\n"
          "convert, diff, domtree and passes note that it has no effect there.\n"
          "Exit codes: 0 success, 1 a check failed, 2 bad input or usage.\n";
}

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    if (argc < 2) {
        printHelp(std::cerr);
        return kBadInput;
    }
    std::string name = argv[1];
    if (name == "--version" || name == "version") {
        std::cout << "passlens-cli " PASSLENS_VERSION "\n";
        return kOk;
    }
    if (name == "--help" || name == "-h" || name == "help") {
        printHelp(std::cout);
        return kOk;
    }
    auto it = commandRegistry().find(name);
    if (it == commandRegistry().end()) {
        std::cerr << "error: unknown command '" << name << "' (try passlens-cli --help)\n";
        return kBadInput;
    }
    const Command& cmd = it->second;
    try {
        Args args(std::vector<std::string>(argv + 2, argv + argc), cmd.valueOptions);
        if (args.flag("--help")) {
            std::cout << "usage: passlens-cli " << cmd.usage << "\n" << cmd.summary << "\n";
            return kOk;
        }
        return cmd.run(args, std::cout, std::cerr);
    } catch (const UsageError& e) {
        std::cerr << "error: " << e.message << "\nusage: passlens-cli " << cmd.usage << "\n";
        return kBadInput;
    } catch (const Error& e) {
        std::cerr << "error: " << e.what() << "\n";
        return e.kind() == ErrorKind::CheckFailed ? kCheckFailed : kBadInput;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
        return kBadInput;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return kBadInput;
    }
}
