#!/bin/sh
# Feeds the same seeded random inputs to two models in ONNX Runtime and compares their outputs.
# Exit 0 when every output matches within tolerance, 1 when one does not (the worst difference is
# printed either way), 2 on bad input or usage, 3 when onnxruntime-node cannot be installed.
#   tests/ort/ort_compare.sh A.onnx B.onnx [--dims batch=3,seq=5] [--rtol R] [--atol A]
#                            [--seed N] [--int-range LO,HI]
exec "$(dirname "$0")/ort_node.sh" ort_compare.js "$@"
