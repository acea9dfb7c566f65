#!/usr/bin/env bash
# `make run`: the demo, one screen. With no GPU: the topology of 8 ranks on 2
# simulated hosts, the TP/DP job on them, an all-reduce sweep. On a host with
# 2 or more NVIDIA GPUs (and the CUDA backend built): the same on the GPUs,
# one rank per GPU, and the TP/DP job rehearsed on 2 simulated hosts of this
# host's own topology (symcomm-topo --write-xml).
#   bash examples/demo.sh BUILD
set -eu
B=${1:-build}
run="$B/bin/symcomm-run"
show() { echo "$*"; "$@"; } # each command, then what it prints
ngpus=0
if [ -f "$B/lib/libsymcomm_cuda.so" ] && command -v nvidia-smi >/dev/null 2>&1; then
  ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
if [ "$ngpus" -lt 2 ]; then
  show "$run" -n 8 --hosts 2 --timeout 60 -- "$B/bin/symcomm-topo"
  show "$run" -n 8 --hosts 2 --timeout 60 -- "$B/examples/tp_dp"
  show "$run" -n 8 --timeout 120 -- "$B/bin/symcomm-perf" -b 8 -e 2M -f 64 -n 5 -w 1 -c 1
  exit 0
fi
# NVLink SHARP stays off for anything that loads NCCL: the GPUs may be shared.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
echo "A GPU host: $ngpus GPUs; the demo runs on them (SYMCOMM_BACKEND=cuda), one rank each"
xml=$(mktemp)
trap 'rm -f "$xml"' EXIT
export SYMCOMM_BACKEND=cuda
show "$run" -n "$ngpus" --timeout 60 -- "$B/bin/symcomm-topo" --write-xml "$xml"
show "$run" -n "$ngpus" --timeout 120 -- "$B/bin/symcomm-perf" -b 8 -e 64M -f 64 -n 5 -w 1 -c 1
echo "The TP/DP job, rehearsed on 2 simulated hosts with this host's topology (SYMCOMM_TOPO_FILE):"
export SYMCOMM_BACKEND=host SYMCOMM_TOPO_FILE="$xml"
show "$run" -n $((2 * ngpus)) --hosts 2 --timeout 60 -- "$B/examples/tp_dp"
