#!/usr/bin/env bash
# session 15 call 4 (2 GPUs): from the probe-like LL kernel (lean1) towards the real call, all-reduce 8 B, -R 1:
# lean5s: lean5 with the stop word looked at last (after the waits); lean6t: lean5s + tag lines pushed and polled by the
# data threads beside their data line; lean1, lean5 and new as in call 3; NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
V="new:build/lib:SYMCOMM_BACKEND=cuda"; for v in lean1 lean5 lean5s lean6t; do V="$V $v:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; done
XVARS="$V nccl:nccl" OPS="allreduce" NP=2 E=8 REPS=3 EXTRA="-R 1" TAG=ar KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
