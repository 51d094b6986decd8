#!/bin/sh
# Opening large models in the app (issue #13): `passlens --time-open` on the generated
# PyTorch-export-style models (1k, 2k, 8k, 25k nodes) and the 50k-node chain, offscreen, with a
# fresh settings folder (first start: default window and docks). Prints a Markdown table.
#   tests/bench/time_open.sh BUILD_DIR [RUNS]
# Needs BUILD_DIR/models/gen (ctest -R gen_models). With RUNS > 1 each figure is the run with the
# median first frame. "app" = first frame minus import: the app's own share (import is scale's).
# CPU = user + sys of the whole process (the pool's analyses included); wall times are noisy on a
# shared machine, CPU much less so. Then (--time-step) the extended passes run in the stepper and
# each step is shown in turn: "step" is the median and max time from choosing a row until the
# step's drawing is in the view.
set -eu
build=$(cd "$1" && pwd)
runs=${2:-3}
gen=$build/models/gen
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$work/config" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$work/run" && chmod 700 "$work/run"

# field NAME FILE: the seconds (or count) after "NAME: " in FILE, "-" when absent.
field() { sed -n "s/^$1: \([0-9.]*\).*/\1/p" "$2" | head -1 | grep . || echo -; }

echo "| model | nodes | import | grouping | layout | boxes | first frame | app (first frame − import) | settled | longest GUI block | expand one group | run passes | step median / max | CPU | peak |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for m in bert_l12_scoped bert_l24_flat bert_l24_scoped bert_l100_scoped bert_l320_scoped bert_l320_flat chain_50k; do
  [ -f "$gen/$m.onnx" ] || { echo "missing $gen/$m.onnx (ctest -R gen_models)" >&2; exit 2; }
  i=0
  while [ $i -lt "$runs" ]; do
    rm -rf "$work/config"
    /usr/bin/time -f "cpu: %U %S\npeak: %M" -o "$work/time.$i" "$build/bin/passlens" --time-open "$gen/$m.onnx" --time-step \
      >"$work/out.$i" 2>"$work/err.$i" || { echo "FAILED: $m" >&2; cat "$work/err.$i" >&2; exit 1; }
    echo "$(field 'first frame' "$work/out.$i") $i" >>"$work/order"
    i=$((i + 1))
  done
  pick=$(sort -n "$work/order" | sed -n "$(( (runs + 1) / 2 ))p" | cut -d' ' -f2)
  rm -f "$work/order"
  out=$work/out.$pick
  nodes=$("$build/bin/passlens-cli" info "$gen/$m.onnx" 2>/dev/null | sed -n 's/^nodes: *\([0-9]*\).*/\1/p' | head -1)
  cpu=$(awk '/^cpu:/ { printf "%.2f", $2 + $3 }' "$work/time.$pick")
  peak=$(awk '/^peak:/ { printf "%.0f", $2 / 1024 }' "$work/time.$pick")
  steps=$(sed -n 's/^step ([0-9]* steps): median \([0-9.]*\) s, max \([0-9.]*\) s/\1 s \/ \2 s/p' "$out" | head -1)
  app=$(awk -v f="$(field 'first frame' "$out")" -v i="$(field import "$out")" 'BEGIN { printf "%.2f", f - i }')
  echo "| $m | ${nodes:--} | $(field import "$out") s | $(field grouping "$out") s | $(field layout "$out") s | $(field boxes "$out") | $(field 'first frame' "$out") s | $app s | $(field settled "$out") s | $(field 'longest GUI block' "$out") s | $(field 'expand one group' "$out") s | $(field 'run passes (extended)' "$out") s | ${steps:--} | $cpu s | $peak MB |"
done
