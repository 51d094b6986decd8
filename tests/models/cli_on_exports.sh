#!/bin/sh
# Every passlens-cli command on the committed PyTorch exports rewritten to opsets 18–23
# (tests/models/*_opset*.onnx): info, optimize at every level with --verify (the interpreter checks
# each pass), the optimized model equal to the opset-17 original in ONNX Runtime, explain, memplan,
# domtree, render and diff; `grad` on every export (the hand-made new-op model must be refused by op name). Prints one line per failure and exits 1 if any.
#   tests/models/cli_on_exports.sh PASSLENS_CLI FIXTURES_DIR WORK_DIR [OPSET]
# OPSET (18, 20, 21 or 23) checks only the rewrites to that opset (CTest runs one test per opset).
set -u
cli=$1 fixtures=$2 work=$3 only=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
failures=0 checked=0 ort_skipped=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

run() {  # run LABEL CMD... : the command must exit 0 (or 1 for diff: "the models differ")
  label=$1; shift
  "$@" >"$work/last.out" 2>"$work/last.err"
  rc=$?
  case "$rc:$label" in
    0:*|"1:"*" diff") return 0 ;;
  esac
  fail "$label: exit $rc — $(head -c 400 "$work/last.err")"
  return 1
}

for model in "$fixtures"/*_opset1[89].onnx "$fixtures"/*_opset2[0-3].onnx "$fixtures"/*_opset2[0-3]_handgelu.onnx; do
  [ -f "$model" ] || continue
  name=$(basename "$model" .onnx)
  if [ -n "$only" ]; then case "$name" in *_opset"$only"|*_opset"$only"_*) ;; *) continue ;; esac; fi
  original="$fixtures/$(echo "$name" | sed 's/_opset[0-9]*\(_handgelu\)\{0,1\}$//').onnx"
  checked=$((checked + 1))
  run "$name info" "$cli" info "$model" || continue
  opset_in=$("$cli" info "$model" --json | sed -n 's/.*"ai.onnx": *\([0-9]*\).*/\1/p' | head -n1)
  for level in basic extended all; do
    out="$work/$name.$level.onnx"
    run "$name optimize --level $level" "$cli" optimize "$model" -o "$out" --level "$level" --verify || continue
    # One `info --json` of the output answers every check below.
    "$cli" info "$out" --json >"$work/out_info.json" 2>&1
    count() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p" "$work/out_info.json" | head -n1; }
    # The model's opset is never lowered.
    opset_out=$(count ai.onnx)
    [ "$opset_in" = "$opset_out" ] || fail "$name $level: opset $opset_in became $opset_out"
    # Attention at opset 23: group-attention (all) makes standard Attention nodes of it.
    case "$name:$level" in vit_tiny_static_opset23:all|transformer_encoder_static_opset23:all)
      attn=$(count Attention)
      [ "${attn:-0}" -gt 0 ] || fail "$name all: expected standard Attention nodes, got ${attn:-0}" ;;
    esac
    # GELU written out at opset 20+: fuse-gelu (extended) makes Gelu nodes of it.
    case $name in *_handgelu)
      if [ "$level" != basic ]; then
        gelus=$(count Gelu)
        erfs=$(count Erf)
        [ "${gelus:-0}" -gt 0 ] && [ -z "$erfs" ] || fail "$name $level: expected Gelu nodes and no Erf, got Gelu=${gelus:-0} Erf=${erfs:-0}"
      fi ;;
    esac
    if [ -f "$original" ]; then
      sh "$here/../ort/ort_compare.sh" "$original" "$out" --rtol 1e-3 --atol 1e-4 >"$work/ort.out" 2>&1
      rc=$?
      if [ $rc = 3 ]; then ort_skipped=$((ort_skipped + 1));
      elif [ $rc != 0 ]; then fail "$name $level: ONNX Runtime outputs differ from the opset-17 export: $(tail -n 3 "$work/ort.out")"; fi
    fi
  done
  run "$name explain" "$cli" explain "$model" --json
  run "$name memplan" "$cli" memplan "$model" --json
  run "$name domtree" "$cli" domtree "$model" --format text
  run "$name render" "$cli" render "$model" -o "$work/$name.svg"
  [ -f "$original" ] && run "$name diff" "$cli" diff "$original" "$model" --json
  case $name in
    newops*)  # GroupNormalization has no gradient rule: a named refusal
      if "$cli" grad "$model" -o "$work/$name.train.onnx" --loss mse >"$work/grad.out" 2>&1; then
        echo "FAIL $name grad: expected a refusal naming the op"; failures=$((failures + 1))
      elif ! grep -q "no gradient rule for op" "$work/grad.out"; then
        echo "FAIL $name grad: refusal does not name the op: $(tail -1 "$work/grad.out")"; failures=$((failures + 1))
      fi ;;
    *) run "$name grad" "$cli" grad "$model" -o "$work/$name.train.onnx" --loss mse ;;
  esac
done

[ $checked -gt 0 ] || { echo "no *_opsetNN.onnx fixtures in $fixtures"; exit 1; }
echo "cli_on_exports: $checked models, $failures failures, ONNX Runtime comparisons skipped: $ort_skipped"
[ $failures = 0 ]
