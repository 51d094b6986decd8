// Writes every teaching example as OUTDIR/<id>.onnx.
#include <filesystem>
#include <iostream>

#include "examples/Examples.h"
#include "onnx/Export.h"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: passlens-make-examples OUTDIR\n";
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    for (const auto& e : passlens::examples::all()) {
        auto path = std::filesystem::path(argv[1]) / (e.id + ".onnx");
        passlens::onnxio::exportModelFile(e.build(), path.string());
    }
    return 0;
}
