// Writes every teaching example as OUTDIR/<id>.onnx.
#include <filesystem>
#include <iostream>
#include <string>

#include "examples/Examples.h"
#include "onnx/Export.h"

int main(int argc, char** argv) {
    const std::string arg = argc == 2 ? argv[1] : "";
    if (argc != 2 || arg.empty() || arg[0] == '-') {
        std::cerr << "usage: passlens-make-examples OUTDIR\n"
                     "writes every teaching example as OUTDIR/<id>.onnx\n";
        return arg == "--help" || arg == "-h" ? 0 : 2;
    }
    std::filesystem::create_directories(argv[1]);
    for (const auto& e : passlens::examples::all()) {
        auto path = std::filesystem::path(argv[1]) / (e.id + ".onnx");
        passlens::onnxio::exportModelFile(e.build(), path.string());
    }
    return 0;
}
