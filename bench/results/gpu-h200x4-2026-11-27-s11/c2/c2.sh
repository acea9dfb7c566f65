#!/usr/bin/env bash
# session 11 call 2: CE probe; base (9eef5a0) vs push vs NCCL at 4 GPUs from 128 KiB; -R 1; knobs; coll GPU tests
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
timeout 120 build/bin/all_pairs > $OUT/all_pairs.txt 2>&1; echo "probe rc=$?"; tail -3 $OUT/all_pairs.txt
V="base:build-ab/base/lib:SYMCOMM_BACKEND=cuda push:build-ab/push/lib:SYMCOMM_BACKEND=cuda nccl:nccl"
XVARS="$V" OPS="allreduce allgather reducescatter alltoall" NP=4 E=512M REPS=1 EXTRA="-b 128K" TAG=g1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0'
XVARS="$V" OPS="allreduce" NP=4 E=512M REPS=1 EXTRA="-b 128K -R 1" TAG=r1 KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0'
XVARS="p256:build-ab/push/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_SCRATCH_BYTES=268435456 p64:build-ab/push/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_BLOCKS=64" OPS="allreduce allgather" NP=4 E=512M REPS=1 EXTRA="-b 8M" TAG=v KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh X 2>&1 | grep -v '^[a-z]*_.*rc=0'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=300 NP=4 TAG=t KEEP=1 bash bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
