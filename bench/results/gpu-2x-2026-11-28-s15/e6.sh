#!/usr/bin/env bash
# session 15 call 6 (2 GPUs): what lean5s's bookkeeping costs, one step left out at a time (all-reduce 8 B, -R 1):
# l5all (call 5) without the stop word (l5ns: not read at the kernel start, not checked), without the guard and
# sc_dev_begin (l5nb), without either (l5nsb); lean1 (the probe-like kernel); NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
V=""; for v in lean1 l5all l5ns l5nb l5nsb; do V="$V $v:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; done
XVARS="$V nccl:nccl" OPS="allreduce" NP=2 E=8 REPS=3 EXTRA="-R 1" TAG=ar KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
