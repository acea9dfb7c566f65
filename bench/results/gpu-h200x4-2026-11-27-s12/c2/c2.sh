#!/usr/bin/env bash
# session 12 call 2: scratch 128 MiB by default. 4 GPUs: LL limit 64 KiB (default) vs 256 KiB vs 1 MiB for all-reduce and
# all-gather, -R 1; 2 GPUs: every collective and sendrecv -R 1 against NCCL, 8 B - 512 MiB; the coll/graph/CUDA-backend GPU steps
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="ll64:build/lib:SYMCOMM_BACKEND=cuda ll256:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_LL_MAX_BYTES=262144 ll1m:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_LL_MAX_BYTES=1048576 nccl:nccl"
XVARS="$V" OPS="allreduce allgather" NP=4 E=4M REPS=1 EXTRA="-R 1" TAG=ll KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
V="sc:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather reducescatter alltoall broadcast reduce sendrecv" NP=2 E=512M REPS=1 EXTRA="-R 1" TAG=two KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=300 NP=4 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
