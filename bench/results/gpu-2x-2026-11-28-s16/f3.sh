#!/usr/bin/env bash
# session 16 call 3 (2 GPUs): the LL rule for 2 GPUs (a block per 2 KiB pushed, up to 32; LL to 512 KiB) against
# febc6d0 (old: a block per 8 KiB up to 8, LL to 64 KiB), 64 blocks forced (b64), and NCCL -R 1, 8 B-2 MiB, 2 runs;
# the collectives' GPU steps with the new rule.
nvidia-smi -L; mkdir -p $OUT/logs
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="old:build-ab/old/lib:$C new:build/lib:$C b64:build/lib:$C,SYMCOMM_COLL_BLOCKS=64 nccl:nccl" \
  OPS="allreduce allgather reducescatter alltoall broadcast reduce" B=8 E=2M F=2 REPS=2 EXTRA="-R 1" TAG=ll bash $S
ONLY='^(unit_cuda|coll_|async_error|gpu_graph)' TT=240 TAG=t KEEP=1 bash build/bin/ab9.sh T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
