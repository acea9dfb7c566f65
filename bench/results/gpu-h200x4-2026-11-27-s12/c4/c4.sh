#!/usr/bin/env bash
# session 12 call 4: 2 GPUs, 1 MiB - 512 MiB, every collective and sendrecv: symcomm on windows (-R 1) against NCCL plain and
# NCCL -R 1 in the same call; 4 GPUs: all-reduce of plain buffers (scratch 128 MiB, the new default) against NCCL plain
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
XVARS="sc:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce sendrecv" NP=2 E=512M REPS=1 EXTRA="-b 1M -R 1" TAG=two1 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce sendrecv" NP=2 E=512M REPS=1 EXTRA="-b 1M" TAG=two0 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="sc:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce" NP=4 E=512M REPS=1 EXTRA="-b 2M" TAG=r0 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
