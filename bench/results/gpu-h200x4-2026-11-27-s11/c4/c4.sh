#!/usr/bin/env bash
# session 11 call 4: pushes to peers in rotated order (rot) vs not (new) vs NCCL, -R 1 and -R 0; coll GPU tests with rot
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
V="new:build-ab/new/lib:SYMCOMM_BACKEND=cuda rot:build-ab/rot/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather reducescatter alltoall" NP=4 E=512M REPS=1 EXTRA="-b 128K -R 1" TAG=r1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="$V" OPS="allreduce allgather reducescatter alltoall" NP=4 E=512M REPS=1 EXTRA="-b 2M" TAG=r0 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=300 NP=4 TAG=t KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
