#!/bin/sh
# Writes ONNX Runtime's optimized form of a model (optimizedModelFilePath), for the model-diff
# tests. onnxruntime-node is installed into WORK_DIR on first use (ort_install.sh). Exit 3 when it
# cannot be installed.
#   tests/ort_optimize.sh WORK_DIR MODEL LEVEL(basic|extended|all) OUT
set -eu
work=$1 model=$2 level=$3 out=$4
"$(dirname "$0")/ort_install.sh" "$work" || exit $?
cd "$work"
node -e '
const ort = require("onnxruntime-node");
const [model, level, out] = process.argv.slice(1);
ort.InferenceSession.create(model, { graphOptimizationLevel: level, optimizedModelFilePath: out })
  .then(() => process.exit(0))
  .catch((e) => { console.error("ort_optimize: " + e.message); process.exit(1); });
' "$model" "$level" "$out"
