#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   packaging/dev.sh app [MODEL]   install deps, build (optimized, in build/), open the app
#                                  (on a teaching example by default)
#   packaging/dev.sh test          install deps, build the instrumented test build (build-test/:
#                                  clang, ASan + UBSan), run every CTest test in it, then replay and
#                                  briefly fuzz every stage with the same build
# BUILD_DIR (default: build), TEST_BUILD_DIR (default: build-test) and JOBS (default: nproc) can be
# overridden. docs/performance.md has the test command's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
jobs=${JOBS:-$(nproc)}
# ccache (when installed) shares objects between checkouts in different folders.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}

bash packaging/setup-debian.sh

case "$mode" in
  app)
    shift
    build=${BUILD_DIR:-build}
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" --parallel "$jobs" --target passlens passlens-cli passlens-examples
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
      exec xvfb-run -a "$build/bin/passlens" "$@"
    fi
    exec "$build/bin/passlens" "$@"
    ;;
  test)
    build=${TEST_BUILD_DIR:-build-test}
    start=$(date +%s)
    cmake -S . -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DPASSLENS_SANITIZE=ON >/dev/null
    cmake --build "$build" --parallel "$jobs"
    built=$(date +%s)
    # Every test under AddressSanitizer + UBSan: the first report fails its test. Qt tests run
    # without a display; ctest prints the closing "N tests passed" summary.
    export QT_QPA_PLATFORM=offscreen
    ctest --test-dir "$build" --output-on-failure --parallel "$jobs" --timeout 1500
    tested=$(date +%s)
    # Bounded fuzz run with the same build: every stage's libFuzzer target, 20 s each
    # (docs/fuzzing.md; the regression inputs were already replayed by the core tests). A finding
    # fails the run (its input is kept in $build/findings/); FUZZ=0 skips the step,
    # FUZZ_STRICT=0 reports findings without failing.
    if [ "${FUZZ:-1}" != 0 ]; then
      if ! FUZZ_BUILD_DIR="$build" MODELS_DIR="$build/models" JOBS="$jobs" tests/fuzz/fuzz.sh ci; then
        echo "fuzz: FINDINGS in $build/findings/" >&2
        if [ "${FUZZ_STRICT:-1}" = 1 ]; then exit 1; fi
      fi
    fi
    echo "dev.sh test: build $((built - start)) s, tests $((tested - built)) s, fuzz $(($(date +%s) - tested)) s"
    ;;
  *)
    echo "usage: packaging/dev.sh app [MODEL] | test" >&2
    exit 2
    ;;
esac
