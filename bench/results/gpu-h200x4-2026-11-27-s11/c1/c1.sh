#!/usr/bin/env bash
# session 11 call 1: all-pairs probe, then base vs NCCL at 4 GPUs, large sizes
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; nvidia-smi topo -m | head -6
timeout 120 build/bin/all_pairs > $OUT/all_pairs.txt 2>&1; echo "probe rc=$?"; cat $OUT/all_pairs.txt
XVARS="base:build-ab/base/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce allgather reducescatter alltoall" NP=4 E=512M REPS=1 TAG=g1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X
XVARS="base:build-ab/base/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce" NP=4 E=512M REPS=1 TAG=r1 EXTRA="-R 1" KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X
