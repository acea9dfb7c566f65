#!/usr/bin/env bash
# session 12 call 5 (knobs only, main's build): 2 GPUs, all-to-all and all-gather on windows with 32/64/128 blocks;
# 4 GPUs, all-reduce of plain buffers 1-16 MiB with the one-shot limit at 4 (default), 16 and 64 MiB (size x ranks)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="b32:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_BLOCKS=32 b64:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_BLOCKS=64 b128:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="alltoall allgather" NP=2 E=256M REPS=1 EXTRA="-b 16M -R 1" TAG=blk KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
V="o4:build/lib:SYMCOMM_BACKEND=cuda o16:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_ONESHOT_MAX_BYTES=16777216 o64:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_ONESHOT_MAX_BYTES=67108864 nccl:nccl"
XVARS="$V" OPS="allreduce" NP=4 E=16M REPS=1 EXTRA="-b 1M -f 2" TAG=one KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
