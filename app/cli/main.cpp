// passlens-cli: the headless face of the engine. Thin: the dispatch (cli/Dispatch.cpp) does the rest.
#include <iostream>

#include "cli/Command.h"

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    return passlens::cli::runCommandLine(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
