#!/usr/bin/env bash
# session 14 call 9 (2 GPUs: 4-GPU kinds were no longer lent): the LL call's line addresses and block ranges
# computed by the host (build/lib) against main before it (build-ab/mid, 2287e08) and 68d20bc (build-ab/old, before
# the eager claim) and NCCL, -R 1; send/recv old/mid/NCCL (what the eager claim costs); the collectives' GPU steps.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
mkdir -p $OUT/logs
XVARS="mid:build-ab/mid:SYMCOMM_BACKEND=cuda new:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce allgather reduce broadcast" NP=2 E=64K REPS=1 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="old:build-ab/old:SYMCOMM_BACKEND=cuda mid:build-ab/mid:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="sendrecv" NP=2 E=64K REPS=1 TAG=p KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
ONLY='^(coll_matrix|coll_mismatch|coll_bad|coll_algo|gpu_graph_1000_2|coll_windows_kinds_2)' TT=200 TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
