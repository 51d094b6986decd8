#!/usr/bin/env bash
# Writes the standard generated model set: gen_models.sh GENMODELS_BINARY OUTDIR
# BERT ≈ 75 nodes a layer + 27 (l12 ≈ 0.9k, l24 ≈ 1.8k, l100 ≈ 7.5k, l320 ≈ 24k nodes).
set -euo pipefail
gen=$1
out=$2
mkdir -p "$out"
t() { "$gen" transformer "$@"; }
t --layers 2 --names scoped -o "$out/bert_l2_scoped.onnx"
t --layers 12 --names scoped -o "$out/bert_l12_scoped.onnx"
t --layers 24 --names scoped -o "$out/bert_l24_scoped.onnx"
t --layers 24 --names flat -o "$out/bert_l24_flat.onnx"
t --layers 24 --names metadata -o "$out/bert_l24_meta.onnx"
t --layers 100 --names scoped --hidden 32 -o "$out/bert_l100_scoped.onnx"
t --layers 320 --names scoped --hidden 32 -o "$out/bert_l320_scoped.onnx"
t --layers 320 --names flat --hidden 32 -o "$out/bert_l320_flat.onnx"
t --layers 2 --style gpt --names scoped -o "$out/gpt_l2_scoped.onnx"
t --layers 2 --style vit --names scoped -o "$out/vit_l2_scoped.onnx"
"$gen" chain --nodes 50000 -o "$out/chain_50k.onnx"
