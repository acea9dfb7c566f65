#!/usr/bin/env bash
# session 15 call 1 (2 GPUs): is the LL call's length in its body or around it? all-reduce 8 B, -R 1, main against
# experiment builds (lean.patch) whose LL kernel is a probe-like 8 B float32 sum: lean1 in symcomm's kernel wrapper,
# lean2 without the wrapper, lean3 lean1 + the stop word voted before the push, lean4 lean3 + the marks; NCCL; the
# floor probe; send/recv 8 B main vs NCCL; SASS of the LL and P2P kernels.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv
mkdir -p $OUT/logs
timeout 60 build/bin/ll_floor 2 2>&1 | tee $OUT/logs/ll_floor.txt | tail -20
AB=build/bin/ab9.sh
V=""; for v in main lean1 lean2 lean3 lean4; do V="$V $v:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; done
XVARS="$V nccl:nccl" OPS="allreduce" NP=2 E=8 REPS=3 EXTRA="-R 1" TAG=ar KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
XVARS="main:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="sendrecv" NP=2 E=8 REPS=3 TAG=p2 KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
for f in build-ab/sass/*.fatbin; do cuobjdump -sass $f > $OUT/logs/sass_$(basename $f .fatbin).txt 2>&1; done
ls -la $OUT/logs/sass_*
cd $OUT && tar czf logs.tgz logs && rm -rf logs
