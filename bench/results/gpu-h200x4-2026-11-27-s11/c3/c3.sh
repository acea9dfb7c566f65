#!/usr/bin/env bash
# session 11 call 3: -R 1 (windows for all-gather/reduce-scatter/all-to-all) base vs new vs NCCL; -R 0 all-reduce scratch sizes; coll GPU tests
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
V="base:build-ab/base/lib:SYMCOMM_BACKEND=cuda new:build-ab/new/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather reducescatter alltoall" NP=4 E=512M REPS=1 EXTRA="-b 128K -R 1" TAG=r1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="new:build-ab/new/lib:SYMCOMM_BACKEND=cuda s128:build-ab/new/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_SCRATCH_BYTES=134217728 s256:build-ab/new/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_SCRATCH_BYTES=268435456 nccl:nccl" OPS="allreduce allgather" NP=4 E=512M REPS=1 EXTRA="-b 8M" TAG=s KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=300 NP=4 TAG=t KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
