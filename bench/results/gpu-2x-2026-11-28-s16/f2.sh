#!/usr/bin/env bash
# session 16 call 2 (2 GPUs): LL for 8 KiB-1 MiB (SYMCOMM_LL_MAX_BYTES=1M) with 4, 16, 32 blocks or the default rule,
# against the default paths and NCCL -R 1; sendrecv with the eager send not waiting for its ack (noack, experiment).
nvidia-smi -L; mkdir -p $OUT/logs
S=build/bin/sweep.sh; C=SYMCOMM_BACKEND=cuda
VARS="def:build/lib:$C ll:build/lib:$C,SYMCOMM_LL_MAX_BYTES=1048576 ll4:build/lib:$C,SYMCOMM_LL_MAX_BYTES=1048576,SYMCOMM_COLL_BLOCKS=4 ll16:build/lib:$C,SYMCOMM_LL_MAX_BYTES=1048576,SYMCOMM_COLL_BLOCKS=16 ll32:build/lib:$C,SYMCOMM_LL_MAX_BYTES=1048576,SYMCOMM_COLL_BLOCKS=32 nccl:nccl" \
  OPS="allreduce allgather reducescatter alltoall broadcast reduce" B=8K E=1M F=2 EXTRA="-R 1" TAG=ll bash $S
VARS="def:build/lib:$C noack:build/lib:$C,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/noack/libsymcomm_cuda.so nccl:nccl" \
  OPS="sendrecv" B=8 E=1M F=4 REPS=2 EXTRA="-R 1" TAG=sr bash $S
cd $OUT && tar czf logs.tgz logs && rm -rf logs
