#!/usr/bin/env bash
# session 16 call 7 (2 GPUs): send/recv's middle sizes against its knobs: lane parts of 16 KiB (lb16) or 8 KiB with
# eager to 8 KiB (lb8), no eager (e0), eager to 64 KiB (e64), against the defaults (64 KiB parts, eager to 32 KiB) and NCCL -R 1.
nvidia-smi -L; mkdir -p $OUT/logs
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="def:build/lib:$C lb16:build/lib:$C,SYMCOMM_P2P_LANE_BYTES=16384,SYMCOMM_P2P_EAGER_BYTES=16384 lb8:build/lib:$C,SYMCOMM_P2P_LANE_BYTES=8192,SYMCOMM_P2P_EAGER_BYTES=8192 e0:build/lib:$C,SYMCOMM_P2P_EAGER_BYTES=0 e64:build/lib:$C,SYMCOMM_P2P_EAGER_BYTES=65536 nccl:nccl" \
  OPS="sendrecv" B=8K E=2M F=2 REPS=2 EXTRA="-R 1" TAG=sr bash $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
