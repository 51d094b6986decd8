#!/usr/bin/env bash
# Runs the libFuzzer targets (ASan + UBSan) of the instrumented test build. docs/fuzzing.md explains.
#   tests/fuzz/fuzz.sh build                      configure + build the targets in FUZZ_BUILD_DIR (default build-test)
#   tests/fuzz/fuzz.sh seeds [full]               write the seed folder (full: every ONNX test model)
#   tests/fuzz/fuzz.sh run SECONDS [STAGE...]     fuzz each stage (default: all five) for SECONDS
#   tests/fuzz/fuzz.sh ci                         seeds, 20 s per stage on the built targets; exit 1 on a finding
# Environment: FUZZ_BUILD_DIR, MODELS_DIR (real models, default build-test/models), JOBS, FUZZ_NICE=1
# (run at nice 19), FUZZ_RSS_MB (default 2048), FUZZ_TIMEOUT (seconds per input, default 30; raise it
# for long runs on a busy machine, where a starved process trips 30 s on inputs that take 1 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${FUZZ_BUILD_DIR:-build-test}
models=${MODELS_DIR:-$build/models}
jobs=${JOBS:-$(nproc)}
rss=${FUZZ_RSS_MB:-2048}
timeout=${FUZZ_TIMEOUT:-30}
stages_all=(import passes explain memplan run)
nice_cmd=()
[ "${FUZZ_NICE:-0}" = 1 ] && nice_cmd=(nice -n 19)

build_targets() {
  if ! command -v clang++ >/dev/null; then
    echo "fuzz: clang++ is not installed (packaging/setup-debian.sh installs it)" >&2
    exit 2
  fi
  # The same configuration as `packaging/dev.sh test` (cmake/Sanitizers.cmake).
  cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPASSLENS_SANITIZE=ON >/dev/null
  "${nice_cmd[@]}" cmake --build "$build" --parallel "$jobs" --target passlens_fuzz_targets passlens-examples
}

write_seeds() {
  local seeds="$build/fuzz-seeds"
  rm -rf "$seeds"
  mkdir -p "$seeds"
  "$build/bin/passlens-genmalformed" "$seeds" >/dev/null
  cp "$build"/examples/*.onnx "$seeds"/ 2>/dev/null || true
  cp tests/fuzz/regressions/* "$seeds"/ 2>/dev/null || true
  # The small real models (the PP-OCR det model is 4.6 MB: slow under ASan, left to long runs).
  for m in ch_ppocr_mobile_v2.0_cls_infer.onnx silero_vad_legacy.onnx silero_vad_v5.onnx; do
    [ -f "$models/$m" ] && cp "$models/$m" "$seeds"/
  done
  if [ "${1:-}" = full ]; then
    for m in "$models"/*.onnx; do [ -f "$m" ] && cp "$m" "$seeds"/; done
  fi
  # ONNX's backend test models: every one for full seeds, every 8th otherwise.
  local i=0
  while IFS= read -r f; do
    if [ "${1:-}" = full ] || [ $((i % 8)) = 0 ]; then cp "$f" "$seeds/testdata_$i.onnx"; fi
    i=$((i + 1))
  done < <(find /usr/share/libonnx-testdata/data -name model.onnx 2>/dev/null | sort)
  echo "fuzz: $(ls "$seeds" | wc -l) seeds in $seeds" >&2
}

run_stages() {
  local seconds=$1
  shift
  local stages=("$@")
  [ ${#stages[@]} = 0 ] && stages=("${stages_all[@]}")
  local found=0
  mkdir -p "$build/findings"
  for stage in "${stages[@]}"; do
    local corpus="$build/fuzz-corpus/$stage"
    mkdir -p "$corpus"
    echo "fuzz: $stage for $seconds s" >&2
    if ! "${nice_cmd[@]}" "$build/bin/passlens_fuzz_$stage" -max_total_time="$seconds" -rss_limit_mb="$rss" -timeout="$timeout" \
        -print_final_stats=1 -artifact_prefix="$build/findings/$stage-" "$corpus" "$build/fuzz-seeds" \
        2>"$build/fuzz-$stage.log"; then
      echo "fuzz: $stage FOUND A CRASH; see $build/fuzz-$stage.log and $build/findings/" >&2
      tail -40 "$build/fuzz-$stage.log" >&2
      found=1
    fi
    grep -E "stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb" "$build/fuzz-$stage.log" | sed "s/^/fuzz: $stage /" >&2 || true
  done
  return $found
}

case "${1:-}" in
  build) build_targets ;;
  seeds) write_seeds "${2:-}" ;;
  run) shift; run_stages "$@" ;;
  ci)
    if [ ! -x "$build/bin/passlens_fuzz_import" ]; then build_targets; fi
    write_seeds
    run_stages "${FUZZ_SECONDS:-20}"
    ;;
  *) sed -n 2,9p "$0" >&2; exit 2 ;;
esac
