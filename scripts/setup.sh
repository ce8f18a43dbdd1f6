#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages iosim needs (if missing),
# then configures and builds everything into build/. The CUDA kernels are
# built when nvcc is found (CUDA Toolkit at /usr/local/cuda or on PATH).
#   IOSIM_BUILD_DIR   build directory            (default: build)
#   IOSIM_CMAKE_ARGS  extra CMake arguments      (e.g. -DIOSIM_KERNEL_MENU=full)
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-matplotlib: only for the experiments' plots (no test needs it).
# pybind11-dev, python3-dev: the Python module iosim (python/; built when CMake finds pybind11).
packages=(cmake g++ make libeigen3-dev libyaml-cpp-dev libboost-test-dev python3-matplotlib pybind11-dev python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi

build_dir=${IOSIM_BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${IOSIM_CMAKE_ARGS:-}
cmake --build "$build_dir" -j "$(nproc)"
