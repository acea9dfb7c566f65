#!/usr/bin/env bash
# On a GPU host: NCCL writes its topology of this host (NCCL_TOPO_DUMP_FILE),
# nvidia-smi prints its matrix, and symcomm-topo --xml reads NCCL's file back,
# so the three views can be compared. Files go to $OUT (or /tmp/symcomm-gpu).
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
out=${OUT:-/tmp/symcomm-gpu}
mkdir -p "$out"
nvidia-smi topo -m >"$out/nvidia-smi-topo.txt" 2>&1
nvidia-smi --query-gpu=index,pci.bus_id,name --format=csv >>"$out/nvidia-smi-topo.txt" 2>&1
cat "$out/nvidia-smi-topo.txt"
nvcc -O2 -o /tmp/dump_nccl_topology tests/gpu/dump_nccl_topology.c -lnccl || exit 1
NCCL_TOPO_DUMP_FILE="$out/nccl-topo.xml" /tmp/dump_nccl_topology || exit 1
make -j8 build/bin/symcomm-topo >/dev/null || exit 1
build/bin/symcomm-topo --xml "$out/nccl-topo.xml" | tee "$out/symcomm-topo.txt"
