#!/bin/sh
# Installs onnxruntime-node@1.30.0 into WORK_DIR once (npm install --ignore-scripts: its install
# script downloads, the CPU binaries are in the package). Shared by ort_optimize.sh and tests/ort/.
# Exit 0 when WORK_DIR/node_modules/onnxruntime-node is there, 3 when it cannot be installed.
#   tests/ort_install.sh WORK_DIR
set -eu
work=$1
mkdir -p "$work"
# Several tests may ask at once (ctest -j): one installs, the others wait for it.
if command -v flock >/dev/null 2>&1; then exec 9>"$work/.install.lock"; flock 9; fi
if [ ! -d "$work/node_modules/onnxruntime-node" ]; then
  command -v npm >/dev/null 2>&1 || { echo "ort_install: npm not found" >&2; exit 3; }
  (cd "$work" && npm install --ignore-scripts --no-audit --no-fund --silent onnxruntime-node@1.30.0 >/dev/null 2>&1) \
    || { echo "ort_install: cannot install onnxruntime-node@1.30.0" >&2; exit 3; }
fi
