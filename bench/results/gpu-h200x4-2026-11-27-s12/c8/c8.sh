#!/usr/bin/env bash
# session 12 call 8: main at 67cbb02 (the review's fixes): the coll/graph/CUDA-backend GPU steps of make test-gpu on 4 GPUs
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=280 NP=4 TAG=t KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
