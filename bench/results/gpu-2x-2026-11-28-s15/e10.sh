#!/usr/bin/env bash
# session 15 call 10 (4 GPUs, lent at the session's end): the final LL call (7b80a33) against NCCL, -R 1, 8 B-64 KiB;
# the collectives' GPU steps on 4 GPUs.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; mkdir -p $OUT/logs
AB=build/bin/ab9.sh
XVARS="new:build/lib:SYMCOMM_BACKEND=cuda nccl:nccl" OPS="allreduce allgather broadcast reduce reducescatter alltoall" NP=4 E=64K REPS=2 EXTRA="-R 1" TAG=c KEEP=1 bash $AB X 2>&1 | grep -v 'rc=0\|^GPU\|build'
ONLY='^(coll_matrix_4|coll_1000_small_4|coll_mismatch_4|coll_stopped_stream_4|async_error_abort_4|fault_abort_thread|fault_peer_abort|fault_kill9_allreduce)' TT=${TT:-200} TAG=t KEEP=1 bash $AB T
cd $OUT && tar czf logs.tgz logs && rm -rf logs
