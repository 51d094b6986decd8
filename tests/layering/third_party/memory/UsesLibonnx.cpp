// Fixture for core_layering_rejects_third_party: libonnx outside core/onnx must fail the check.
#include <onnx/defs/schema.h>
