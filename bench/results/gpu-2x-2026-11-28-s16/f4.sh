#!/usr/bin/env bash
# session 16 call 4 (2 GPUs): the kept LL rule for 2 GPUs (a block per 2 KiB pushed, up to 64; LL to 512 KiB) against
# febc6d0 (old) and NCCL -R 1, 8 B-128 MiB, 2 runs; LL to 1 MiB (ll1m) beside it; the collectives' GPU steps.
nvidia-smi -L; mkdir -p $OUT/logs
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="old:build-ab/old/lib:$C new:build/lib:$C ll1m:build/lib:$C,SYMCOMM_LL_MAX_BYTES=1048576 nccl:nccl" \
  OPS="allreduce allgather reducescatter alltoall broadcast reduce" B=8 E=128M F=2 REPS=2 EXTRA="-R 1" TAG=ll bash $S
ONLY='^(unit_cuda|coll_|async_error|gpu_graph)' TT=240 TAG=t KEEP=1 bash build/bin/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
