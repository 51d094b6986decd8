#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   packaging/dev.sh app [MODEL]   install deps, build, open the app (on a teaching example by default)
#   packaging/dev.sh test          install deps, build, run every test with CTest
# BUILD_DIR (default: build) and JOBS (default: nproc) can be overridden.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
build=${BUILD_DIR:-build}
jobs=${JOBS:-$(nproc)}

bash packaging/setup-debian.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --parallel "$jobs"

case "$mode" in
  app)
    shift
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
      exec xvfb-run -a "$build/bin/passlens" "$@"
    fi
    exec "$build/bin/passlens" "$@"
    ;;
  test)
    # Qt tests run without a display; ctest prints the closing "N tests passed" summary.
    export QT_QPA_PLATFORM=offscreen
    ctest --test-dir "$build" --output-on-failure --parallel "$jobs" --timeout 1500
    # Bounded fuzz run: every stage's libFuzzer target, 20 s each, on a clang build in
    # build-fuzz (docs/fuzzing.md). A finding fails the run (its input is kept in
    # build-fuzz/findings/); FUZZ=0 skips the step, FUZZ_STRICT=0 reports findings without failing.
    if [ "${FUZZ:-1}" != 0 ]; then
      if ! MODELS_DIR="$build/models" JOBS="$jobs" tests/fuzz/fuzz.sh ci; then
        echo "fuzz: FINDINGS in build-fuzz/findings/" >&2
        if [ "${FUZZ_STRICT:-1}" = 1 ]; then exit 1; fi
      fi
    fi
    ;;
  *)
    echo "usage: packaging/dev.sh app [MODEL] | test" >&2
    exit 2
    ;;
esac
