#!/usr/bin/env bash
# session 17 call 5 (2 GPUs): the LL path with no stack and a kernel per kind (and per float32/bfloat16/float16
# sum for the kinds that reduce; build/) against main (build-ab/main) and NCCL: every collective 8 B-1 MiB, -R 1,
# best of 2; every dtype and op of the LL path checked (-d all --op all, 8 B-64 KiB); -G 10 against -G 1;
# the collectives' GPU steps with the new build.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L
t0=$(date +%s)
M="main:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/main/libsymcomm_cuda.so"
N="new:build/lib:SYMCOMM_BACKEND=cuda"
VARS="$M $N nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce" NP=2 B=8 E=1M F=2 REPS=2 EXTRA="-R 1" TAG=s bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep $(( $(date +%s)-t0 ))s"
for o in allreduce reduce reducescatter allgather alltoall broadcast; do
  timeout -k 5 120 env SYMCOMM_BACKEND=cuda build/bin/symcomm-run -n 2 --timeout 110 -- build/bin/symcomm-perf -o $o -d all --op all -b 8 -e 64K -f 4 -n 5 -w 2 -c 1 -R 1 > $L/all_$o.log 2>&1
  echo "all dtypes/ops $o rc=$? $(grep -c '^ *[0-9]' $L/all_$o.log) rows, $(grep -h 'Out of bounds' $L/all_$o.log)"
done
for G in 1 10; do for v in main new nccl; do
  case $v in main) ev="SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/main/libsymcomm_cuda.so"; eng="";; new) ev="SYMCOMM_BACKEND=cuda"; eng="";; nccl) ev=""; eng="--engine nccl";; esac
  timeout -k 5 100 env $ev build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf $eng -o allreduce -b 8 -e 64K -f 8 -G $G -n 100 -w 20 -c 1 -R 1 > $L/G${G}_$v.log 2>&1
  echo "G$G $v rc=$? $(grep -E '^ +[0-9]' $L/G${G}_$v.log | awk '{printf "%s:%s ", $1, $6}')"
done; done
echo "$(( $(date +%s)-t0 ))s"
timeout -k 5 300 env ONLY='^(unit_cuda|coll_|async_error|gpu_graph)' OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^FAIL" $L/test_gpu.log | cut -c1-120; grep -E "passed|failed" $L/test_gpu.log | tail -1
cd $OUT && tar czf g5.logs.tgz logs && rm -rf logs
