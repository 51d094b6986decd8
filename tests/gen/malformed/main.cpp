// passlens-genmalformed DIR: writes the malformed-model corpus (see MalformedModels.h) into DIR.
#include <filesystem>
#include <iostream>

#include "MalformedModels.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: passlens-genmalformed DIR\n";
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    for (const auto& path : passlens::malformed::writeMalformedModels(argv[1])) std::cout << path << "\n";
    return 0;
}
