#!/usr/bin/env bash
# session 14 call 8: the whole of make test-gpu with compressed fatbins (main + -Xfatbin=-compress-all), then
# all-reduce 8 B-1 MiB against NCCL, -R 1, as a check that nothing moved.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
mkdir -p $OUT/logs
TT=420 TAG=t KEEP=1 bash $AB T
XVARS="main:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce" NP=4 E=1M REPS=1 EXTRA="-R 1" TAG=a KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
