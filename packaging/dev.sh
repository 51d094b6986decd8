#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine:
#   packaging/dev.sh app [MODEL]   install deps, build (optimized, in build/), open the app
#                                  (on a teaching example by default)
#   packaging/dev.sh test          install deps, build the instrumented test build (build-test/:
#                                  clang, ASan + UBSan) and run every CTest test in it, a brief
#                                  fuzz run of every stage with the same build among them
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
    # without a display; ctest prints the closing "N tests passed" summary. The bounded fuzz run
    # (every stage's libFuzzer target for 20 s, docs/fuzzing.md) is among them, label `fuzz`: a
    # finding fails its test and keeps the input in $build/findings/. FUZZ=0 leaves it out.
    export QT_QPA_PLATFORM=offscreen
    skip=()
    [ "${FUZZ:-1}" = 0 ] && skip=(-LE fuzz)
    ctest --test-dir "$build" --output-on-failure --parallel "$jobs" --timeout 1500 "${skip[@]}"
    tested=$(date +%s)
    echo "dev.sh test: build $((built - start)) s, tests $((tested - built)) s"
    ;;
  *)
    echo "usage: packaging/dev.sh app [MODEL] | test" >&2
    exit 2
    ;;
esac
