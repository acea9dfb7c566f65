#!/usr/bin/env bash
# session 17 call 7 (2 GPUs): the final build (no stack in the LL call, a kernel per kind and common sum, the LL
# kernels started early): make test-gpu; every collective 8 B-4 MiB against NCCL with the graph launched once
# (-G 1, best of 2) and ten times (-G 10), the early start off (late) beside it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L
t0=$(date +%s)
N="new:build/lib:SYMCOMM_BACKEND=cuda"
O="late:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_COLL_EARLY_START=0"
OPS="allreduce allgather reducescatter alltoall broadcast reduce"
VARS="$N $O nccl:nccl" OPS="$OPS" NP=2 B=8 E=4M F=2 REPS=2 G=1 EXTRA="-R 1" TAG=g1 bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep G1 $(( $(date +%s)-t0 ))s"
VARS="$N $O nccl:nccl" OPS="$OPS" NP=2 B=8 E=1M F=2 REPS=1 G=10 EXTRA="-R 1" TAG=g10 bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep G10 $(( $(date +%s)-t0 ))s"
timeout -k 5 400 env OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^FAIL" $L/test_gpu.log | cut -c1-120; grep -E "passed|failed" $L/test_gpu.log | tail -1
cd $OUT && tar czf g7.logs.tgz logs && rm -rf logs
