#!/usr/bin/env bash
# session 16 call 1 (2 GPUs): make test-gpu on febc6d0 (the review's fixes, the abort-queued LL steps);
# every collective and sendrecv, 8 B-256 MiB, symcomm -R 1 against NCCL -R 1, one run each (where the 2-GPU rows stand).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
TT=${TT:-330} TAG=t KEEP=1 bash $AB T
XVARS="sc:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce sendrecv" NP=2 E=256M REPS=1 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
cd $OUT && tar czf logs.tgz logs && rm -rf logs
