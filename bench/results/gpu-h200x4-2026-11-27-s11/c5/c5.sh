#!/usr/bin/env bash
# session 11 call 5: the review's fixes (all-gather on windows copies its part first; overlapping reduce-scatter stages): GPU steps, one all-gather run
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ONLY='^(coll_windows|coll_matrix|coll_large|coll_1000|gpu_graph)' TT=200 NP=4 TAG=t KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh T
XVARS="cur:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allgather" NP=4 E=512M REPS=1 EXTRA="-b 32M -R 1" TAG=r1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
