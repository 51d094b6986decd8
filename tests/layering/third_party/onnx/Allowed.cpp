// Fixture for core_layering_rejects_third_party: core/onnx may include libonnx (not reported).
#include <onnx/onnx_pb.h>
#include <google/protobuf/arena.h>
