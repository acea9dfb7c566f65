#!/usr/bin/env bash
# session 15 call 5 (2 GPUs): what lean5s's bookkeeping costs, one step left out at a time (all-reduce 8 B, -R 1):
# l5m no marks, l5a no argument check, l5v a plain sync for the vote, l5f only the call counter at the end, l5all none
# of the four; l5p lean5s + the tag lines pushed (not checked); l6w lean5s + tag lines pushed by another warp (threads
# 32 + r) and polled beside the data; lean5s; NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
V=""; for v in lean5s l5m l5a l5v l5f l5all l5p l6w; do V="$V $v:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; done
XVARS="$V nccl:nccl" OPS="allreduce" NP=2 E=8 REPS=3 EXTRA="-R 1" TAG=ar KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
