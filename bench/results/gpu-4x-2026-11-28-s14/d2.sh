#!/usr/bin/env bash
# session 14 call 2: the LL call with one of its steps left out at a time (build-ab/exp: an experiment build whose
# LL kernel reads SC_EXP's bits from the arguments), against main and NCCL; the LL floor probe again (+ %globaltimer).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
mkdir -p $OUT/logs
timeout 60 build/bin/ll_floor 4 2>&1 | tee $OUT/logs/ll_floor.txt
AB=bench/results/gpu-h200x4-2026-11-27-s9/ab9.sh
V="main:build/lib:SYMCOMM_BACKEND=cuda"
for e in 0 1 2 4 8 16 32 64 128 255; do V="$V e$e:build-ab/exp:SYMCOMM_BACKEND=cuda,SC_EXP=$e"; done
XVARS="$V nccl:nccl" OPS="allreduce" NP=4 E=2K REPS=1 EXTRA="-R 1" TAG=x4 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="main:build/lib:SYMCOMM_BACKEND=cuda e0:build-ab/exp:SYMCOMM_BACKEND=cuda,SC_EXP=0 e255:build-ab/exp:SYMCOMM_BACKEND=cuda,SC_EXP=255 nccl:nccl" OPS="allgather reduce" NP=4 E=2K REPS=1 EXTRA="-R 1" TAG=y4 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
XVARS="main:build/lib:SYMCOMM_BACKEND=cuda e255:build-ab/exp:SYMCOMM_BACKEND=cuda,SC_EXP=255 nccl:nccl" OPS="allreduce" NP=2 E=2K REPS=1 EXTRA="-R 1" TAG=x2 KEEP=1 bash $AB X 2>&1 | grep -v '^[a-z]*_.*rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
