#!/usr/bin/env bash
# session 14 call 10 (2 GPUs): the eager claim by a relaxed atomic maximum (build/lib) against main before it
# (build-ab/mid, 2287e08: acq_rel), 68d20bc (build-ab/old: no claim) and NCCL; then the send/recv GPU steps.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
mkdir -p $OUT/logs
XVARS="old:build-ab/old:SYMCOMM_BACKEND=cuda mid:build-ab/mid:SYMCOMM_BACKEND=cuda new:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="sendrecv" NP=2 E=64K REPS=2 TAG=p KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(p2p_|fault_kill9_sendrecv|gpu_graph_1000_2|unit_cuda)' TT=240 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
