#!/usr/bin/env bash
# session 12 call 1: all-reduce on windows pushed through the outputs (push) vs pulling the shares (pull) vs NCCL, -R 1;
# -R 0 with scratch 64/128/256 MiB; the coll/graph/CUDA-backend GPU steps (incl. coll_windows_push_2/_4)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="push:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_ALLREDUCE_PUSH_MIN_BYTES=0 pull:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_ALLREDUCE_PUSH_MIN_BYTES=1099511627776 nccl:nccl"
XVARS="$V" OPS="allreduce" NP=4 E=512M REPS=2 EXTRA="-b 128K -R 1" TAG=r1 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
V="s64:build/lib:SYMCOMM_BACKEND=cuda s128:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_SCRATCH_BYTES=134217728 s256:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_SCRATCH_BYTES=268435456 nccl:nccl"
XVARS="$V" OPS="allreduce" NP=4 E=512M REPS=1 EXTRA="-b 2M" TAG=r0 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=300 NP=4 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
