#!/usr/bin/env bash
# session 12 call 3: main with F2 (ANY_OFFSET windows) and scratch 128 MiB. 2 GPUs: NCCL plain for every collective and sendrecv,
# 8 B - 512 MiB (call 2 had NCCL -R 1); LL limit 64 KiB vs 256 KiB on 2 and 4 GPUs, 8 KiB - 4 MiB; the coll/graph/CUDA/shim GPU steps
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
XVARS="nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce sendrecv" NP=2 E=512M REPS=1 EXTRA="" TAG=two0 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
V="ll64:build/lib:SYMCOMM_BACKEND=cuda ll256:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_LL_MAX_BYTES=262144"
XVARS="$V" OPS="allreduce allgather reducescatter alltoall broadcast" NP=2 E=4M REPS=1 EXTRA="-b 8K -R 1" TAG=ll2 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="$V" OPS="reducescatter alltoall broadcast" NP=4 E=4M REPS=1 EXTRA="-b 8K -R 1" TAG=ll4 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_|gpu_graph|unit_cuda)' TT=280 NP=4 TAG=t KEEP=1 bash $AB T
(SYMCOMM_BACKEND=cuda B=build timeout 100 bash tests/scripts/test_nccl_shim.sh > $OUT/logs/shim_cuda.log 2>&1; echo "shim on cuda rc=$?"; tail -3 $OUT/logs/shim_cuda.log)
cd $OUT && tar czf logs.tgz logs && rm -rf logs
