#!/usr/bin/env bash
# session 17 call 3 (2 GPUs): the LL call with no stack (its line's reduction in registers, the regions read with
# the first loads: new, build/) against main (build-ab/main) and NCCL, every collective 8 B-1 MiB, -R 1, best of
# 2; its phases (trace build of the new code, build-ab/trnew); the collectives' GPU steps with the new build.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L/tr
t0=$(date +%s)
for spec in allreduce:8 allgather:8 reduce:8 broadcast:8 allreduce:4K; do
  o=${spec%%:*}; b=${spec#*:}
  timeout -k 5 100 env SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/trnew/libsymcomm_cuda.so build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf -o $o -b $b -e $b -G 1 -n 2100 -w 20 -c 1 -R 1 > $L/tr/${o}_$b.log 2>&1
  echo "$o $b rc=$? $(grep -E '^ +[0-9]' $L/tr/${o}_$b.log | awk '{print $6}' | head -1) $(grep -h LLTR $L/tr/${o}_$b.log | sed 's/(ns, 1 blocks)//' | head -4 | tr '\n' ' ')"
done
M="main:build/lib:SYMCOMM_BACKEND=cuda,SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/main/libsymcomm_cuda.so"
N="new:build/lib:SYMCOMM_BACKEND=cuda"
VARS="$M $N nccl:nccl" OPS="allreduce allgather reducescatter alltoall broadcast reduce" NP=2 B=8 E=1M F=2 REPS=2 EXTRA="-R 1" TAG=s bash build/bin/sweep.sh 2>&1 | grep -v 'rc=0'
echo "sweep $(( $(date +%s)-t0 ))s"
timeout -k 5 300 env ONLY='^(unit_cuda|coll_|async_error|gpu_graph)' OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^FAIL" $L/test_gpu.log | cut -c1-120; grep -E "passed|failed" $L/test_gpu.log | tail -1
cd $OUT && tar czf g3.logs.tgz logs && rm -rf logs
