#!/usr/bin/env bash
# session 15 call 7 (2 GPUs): the LL call reading the stop word's device copy (new) against main before this session
# (old, b0e08d1) and NCCL, -R 1, every collective 8 B-64 KiB; all-reduce also with the tag lines left out (notags:
# neither pushed nor checked; notagck: pushed, not checked; tags.patch); then make test-gpu.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
O="old:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/main/libsymcomm_cuda.so"
N="new:build/lib:SYMCOMM_BACKEND=cuda"
T=""; for v in notags notagck; do T="$T $v:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; done
XVARS="$O $N $T nccl:nccl" OPS="allreduce" NP=2 E=64K REPS=2 EXTRA="-R 1" TAG=ar KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
XVARS="$O $N nccl:nccl" OPS="allgather broadcast reduce reducescatter alltoall" NP=2 E=64K REPS=2 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
TT=${TT:-240} TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
