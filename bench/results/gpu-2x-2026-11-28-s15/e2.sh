#!/usr/bin/env bash
# session 15 call 2 (2 GPUs): the LL call with nothing before its pushes but the loads they need (stop word and marks
# after the pushes, no vote, quick polls before a wait's first look) against main before it (b0e08d1) and NCCL, -R 1,
# every collective 8 B-64 KiB; then make test-gpu.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
V="old:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/main/libsymcomm_cuda.so new:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather broadcast reduce reducescatter alltoall" NP=2 E=64K REPS=2 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
TT=${TT:-300} TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
