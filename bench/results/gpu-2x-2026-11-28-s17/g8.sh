#!/usr/bin/env bash
# session 17 call 8 (2 GPUs): the next LL kernel let start once this one's blocks are past their waits (new: the
# review found that starting it at once could leave a peer's block no SM with two communicators) against starting
# it at once (start: commit 088dc02's build), no early start (late) and NCCL, -G 10 and -G 1; make test-gpu.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L
t0=$(date +%s)
N="new:build/lib:SYMCOMM_BACKEND=cuda"
S="start:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/start/libsymcomm_cuda.so"
O="late:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_EARLY_START=0"
VARS="$S $N $O nccl:nccl" OPS="allreduce allgather reducescatter broadcast" NP=2 B=8 E=1M F=4 REPS=1 G=10 EXTRA="-R 1" TAG=g10 bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep G10 $(( $(date +%s)-t0 ))s"
VARS="$N nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce" NP=2 B=8 E=1M F=4 REPS=1 G=1 EXTRA="-R 1" TAG=g1 bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep G1 $(( $(date +%s)-t0 ))s"
timeout -k 5 400 env OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^FAIL" $L/test_gpu.log | cut -c1-120; grep -E "passed|failed" $L/test_gpu.log | tail -1
cd $OUT && tar czf g8.logs.tgz logs && rm -rf logs
