#!/usr/bin/env bash
# On the GPU machine, after l2_write_run.sh: which store kernel measures the L2's intake (the chunked
# CTAs of l2_write_probe.cu against iosim calibrate's first, grid-stride kernel, zeros or values), beside a
# long read stream and a 64 MiB copy, each twice. Run from the repository root with the probe built into
# build-probe/ (see l2_write_probe.cu). Usage: experiments/probes/l2_write_run2.sh OUT
set -uo pipefail
configs=
for rep in 1 2; do configs="$configs l2write:8:256 l2writev:8:256 gswrite:8:256 gswrite0:8:256 gswrite:8:2048 l2write:4:256 l2writev:4:256 read:512 copy:64"; done
. experiments/probes/ncu_probe.sh
ncu_probe "$1" "stream|rewrite" gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_read.sum build-probe/l2_write_probe $configs
