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
tar cf - -C "$stage" . | xz -9 -T"${JOBS:-2}" > "$carry"/bins.tar.xz
du -sh "$carry"/bins.tar.xz
