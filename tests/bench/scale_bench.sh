#!/bin/sh
# The engine at scale (issue #14): wall time and peak memory of passlens-cli on generated
# transformer encoders (~1k, ~8k, ~25k nodes) and a 50k-node chain, with ONNX Runtime's session
# creation (extended level, optimizedModelFilePath) on the same file as the baseline, in one run.
#   tests/bench/scale_bench.sh BUILD_DIR [TABLE.md]
# Needs build/models/gen (ctest -R gen_models, or passlens-genmodels) and npm; installs
# onnxruntime-node (version pinned in tests/bench/ort/package.json) into BUILD_DIR/bench-ort with
# --ignore-scripts (its install script downloads, the CPU binaries ship in the package).
set -eu
build=$(cd "$1" && pwd)
table=${2:-$build/scale_bench.md}
here=$(cd "$(dirname "$0")" && pwd)
cli=$build/bin/passlens-cli
gen=$build/models/gen
work=$build/scale_bench
mkdir -p "$work"

ort=$build/bench-ort
if [ ! -d "$ort/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort"
  cp "$here/ort/package.json" "$here/ort/ort_session.js" "$ort/"
  (cd "$ort" && npm install --ignore-scripts --no-audit --no-fund >/dev/null)
fi
cp "$here/ort/ort_session.js" "$ort/"

# measure NAME CMD...: runs CMD, prints "seconds peak_MiB" (wall clock, max resident set).
measure() {
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$@" >"$work/out.txt" 2>"$work/err.txt" || {
    echo "FAILED: $*" >&2; cat "$work/err.txt" >&2; echo "- -"; return 0; }
  awk '{ printf "%.2f %.0f\n", $1, $2 / 1024 }' "$work/time.txt"
}

models="bert_l12_scoped bert_l100_scoped bert_l320_scoped chain_50k"
echo "| model | nodes | command | seconds | peak MiB |" >"$table"
echo "|---|---:|---|---:|---:|" >>"$table"
for m in $models; do
  f=$gen/$m.onnx
  [ -f "$f" ] || { echo "missing $f (run: ctest --test-dir $build -R gen_models)" >&2; exit 2; }
  nodes=$("$cli" info "$f" --json | sed -n 's/.*"node_count": \([0-9]*\).*/\1/p' | head -1)
  row() { echo "| $m | $nodes | $1 | $2 | $3 |" >>"$table"; echo "$m $1 $2 $3"; }
  set -- $(measure "$cli" info "$f"); row "import (info)" "$1" "$2"
  for level in basic extended all; do
    set -- $(measure "$cli" optimize "$f" -o "$work/opt.onnx" --level $level); row "optimize --level $level" "$1" "$2"
  done
  set -- $(measure "$cli" explain "$f" --json); row "explain --json" "$1" "$2"
  set -- $(measure "$cli" memplan "$f" --planner best --json); row "memplan --planner best" "$1" "$2"
  set -- $(measure "$cli" domtree "$f" --format json); row "domtree" "$1" "$2"
  set -- $(measure "$cli" convert "$f" "$work/conv.onnx"); row "convert" "$1" "$2"
  set -- $(measure node "$ort/ort_session.js" "$f" "$work/ort.onnx" extended); row "ONNX Runtime session (extended)" "$1" "$2"
done
echo "table written to $table"
