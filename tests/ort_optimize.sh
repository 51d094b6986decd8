#!/bin/sh
# Writes ONNX Runtime's optimized form of a model (optimizedModelFilePath), for the model-diff
# tests. onnxruntime-node is installed into WORK_DIR on first use (--ignore-scripts: its install
# script downloads, the CPU binaries are in the package). Exit 3 when it cannot be installed.
#   tests/ort_optimize.sh WORK_DIR MODEL LEVEL(basic|extended|all) OUT
set -eu
work=$1 model=$2 level=$3 out=$4
mkdir -p "$work"
# The core and Qt tests may run at once (ctest -j): one installs, the other waits.
if command -v flock >/dev/null 2>&1; then exec 9>"$work/.install.lock"; flock 9; fi
if [ ! -d "$work/node_modules/onnxruntime-node" ]; then
  command -v npm >/dev/null 2>&1 || { echo "ort_optimize: npm not found" >&2; exit 3; }
  (cd "$work" && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.30.0 >/dev/null 2>&1) \
    || { echo "ort_optimize: cannot install onnxruntime-node@1.30.0" >&2; exit 3; }
fi
cd "$work"
node -e '
const ort = require("onnxruntime-node");
const [model, level, out] = process.argv.slice(1);
ort.InferenceSession.create(model, { graphOptimizationLevel: level, optimizedModelFilePath: out })
  .then(() => process.exit(0))
  .catch((e) => { console.error("ort_optimize: " + e.message); process.exit(1); });
' "$model" "$level" "$out"
