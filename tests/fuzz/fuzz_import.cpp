// Feeds arbitrary bytes to the importer: it must either load a model or throw passlens::Error,
// never crash, hang or leak. Shape inference is off (it is libonnx's code, not ours).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/Error.h"
#include "onnx/Export.h"
#include "onnx/Import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    passlens::onnxio::ImportOptions options;
    options.inferShapes = false;
    try {
        auto model = passlens::onnxio::importModelBytes(std::string_view(reinterpret_cast<const char*>(data), size), "/nonexistent", options);
        (void)passlens::onnxio::exportModelBytes(model);
    } catch (const passlens::Error&) {
    }
    return 0;
}
