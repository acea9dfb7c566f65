#!/usr/bin/env bash
# session 16 call 5 (2 GPUs): blocks of the barrier paths above the LL limit (SYMCOMM_COLL_BLOCKS 16, 32, 64 against
# the default, a block per 4 KiB up to 128), 1-16 MiB, -R 1, against NCCL -R 1; 2 runs.
nvidia-smi -L; mkdir -p $OUT/logs
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="def:build/lib:$C b16:build/lib:$C,SYMCOMM_COLL_BLOCKS=16 b32:build/lib:$C,SYMCOMM_COLL_BLOCKS=32 b64:build/lib:$C,SYMCOMM_COLL_BLOCKS=64 nccl:nccl" \
  OPS="allreduce allgather reducescatter alltoall broadcast reduce" B=1M E=16M F=2 REPS=2 EXTRA="-R 1" TAG=nb bash $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
