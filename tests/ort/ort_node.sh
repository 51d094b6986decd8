#!/bin/sh
# Runs a Node script of tests/ort/ with onnxruntime-node@1.30.0 on its module path, installing it
# first (tests/ort_install.sh) into $PASSLENS_ORT_WORK (default: a folder under $TMPDIR).
# Exit 3 when onnxruntime-node cannot be installed; otherwise the script's exit code.
#   tests/ort/ort_node.sh SCRIPT.js ARGS...
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${PASSLENS_ORT_WORK:-${TMPDIR:-/tmp}/passlens-ort-$(id -u)}
"$here/../ort_install.sh" "$work" || exit $?
script=$1
shift
case $script in /*) ;; *) [ -f "$script" ] || script=$here/$script ;; esac
NODE_PATH="$work/node_modules${NODE_PATH:+:$NODE_PATH}" exec node "$script" "$@"
