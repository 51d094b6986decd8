// libFuzzer target for one stage of the engine (PASSLENS_FUZZ_STAGE, see Stages.h): the bytes
// must import and go through the stage, or be refused with passlens::Error. Anything else — a
// crash, a sanitizer report, a hang, another exception — is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "Stages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)passlens::fuzz::runStage(passlens::fuzz::Stage::PASSLENS_FUZZ_STAGE,
                                   std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
