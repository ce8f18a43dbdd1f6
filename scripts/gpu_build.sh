#!/usr/bin/env bash
# Builds the kernels, the harness, the iosim CLI and the GPU tests here for the GPU machine
# (sm_90, full block-size menu by default) and packs the executables a device
# call needs into build-gpu-carry/bins.tar.xz (pass carry: ["build-gpu-carry"];
# scripts/gpu_device_run.sh unpacks it with Python's lzma, which the GPU
# machine has). The GPU machine has no Eigen/yaml-cpp/Boost headers; yaml-cpp,
# Boost.Test and the CUDA runtime are linked statically, so these binaries run
# there as they are. Packed, because each executable holds every kernel of the
# full menu (~46 MB) and a call carries at most 64 MiB; xz shares the copies.
#   IOSIM_KERNEL_MENU=full|ci  IOSIM_CUDA_ARCHS="90"  JOBS=2  scripts/gpu_build.sh
# IOSIM_GPU_BUILD_DIR (default build-gpu) and IOSIM_GPU_CARRY_DIR (default
# build-gpu-carry) let several engineers build side by side; carry the latter.
# IOSIM_GPU_PACK="iosim-kernels iosim test_gpu_fa3 ..." packs only those
# executables (and nothing else): every test executable holds the whole kernel
# menu, so the full pack (about 52 MB) no longer fits a device call beside the
# tree (tracked files, about 37 MB, against the call's 64 MiB); the script
# warns when the two together pass it.
set -euo pipefail
cd "$(dirname "$0")/.."
menu=${IOSIM_KERNEL_MENU:-full}
archs=${IOSIM_CUDA_ARCHS:-90}
build=${IOSIM_GPU_BUILD_DIR:-build-gpu}
carry=${IOSIM_GPU_CARRY_DIR:-build-gpu-carry}
cmake -S . -B "$build" -DIOSIM_CUDA_ARCHS="$archs" -DIOSIM_KERNEL_MENU="$menu" > /dev/null
cmake --build "$build" -j "${JOBS:-2}" 2>&1 | tee "$build"/build.log | grep -E "error" || true
stage="$build"/stage
rm -rf "$stage" "$carry"
mkdir -p "$stage/obj" "$carry"
cp "$build"/kernels/iosim-kernels "$stage/"
cp "$build"/sim/iosim "$stage/"  # the CLI with `iosim calibrate` (linked with the CUDA library here)
cp "$build"/kernels/iosim-peer "$stage/"  # cuBLAS and copy-bandwidth peers (experiments/bench_attention.sh --standard)
find "$build"/tests/gpu -maxdepth 1 -name 'test_gpu_*' -type f -executable -exec cp {} "$stage/" \;
strip "$stage"/iosim-kernels "$stage"/iosim "$stage"/iosim-peer "$stage"/test_gpu_*  # host symbols only; device code keeps its line info
# The fp16 FA2 objects, for cuobjdump -sass on the GPU machine (no cuobjdump here).
cp "$build"/kernels/CMakeFiles/iosim_kernels.dir/fa2/fa2_{fwd,bwd}_fp16_d{64,128}.cu.o "$stage/obj/"
# The compiler's register/spill report per kernel (from -Xptxas -v; scripts/ptxas_log.sh
# keeps it out of the build output, one log per object file).
cat "$build"/kernels/ptxas/*.log | grep -E "Compiling entry|registers|spill" > "$stage/ptxas-report.txt" || true
if [ -n "${IOSIM_GPU_PACK:-}" ]; then
  picked="$build"/stage-picked
  rm -rf "$picked" && mkdir -p "$picked"
  for f in $IOSIM_GPU_PACK; do cp "$stage/$f" "$picked/" || { echo "gpu_build: no $f in $stage" >&2; exit 2; }; done
  stage=$picked
fi
tar cf - -C "$stage" . | xz -9 -T"${JOBS:-2}" > "$carry"/bins.tar.xz
du -sh "$carry"/bins.tar.xz
pack=$(stat -c %s "$carry"/bins.tar.xz)
tree=$(git ls-files -z | du --files0-from=- -cb | tail -1 | cut -f1)
if [ $((pack + tree)) -gt $((64 * 1024 * 1024)) ]; then
  echo "gpu_build: warning: the pack ($((pack / 1000000)) MB) and the tracked tree ($((tree / 1000000)) MB) pass a" \
       "device call's 64 MiB; pack fewer executables (IOSIM_GPU_PACK=\"iosim-kernels iosim test_gpu_...\")" >&2
fi
