#!/usr/bin/env bash
# session 17 call 1 (2 GPUs): the LL call's phases on block 0's leader (trace build: build-ab/trace, %globaltimer
# stamps, averages over 2048 calls printed by the kernel), against the untraced build and NCCL at the same sizes;
# graph launched once (-G 1) or 10 times (-G 10), both engines; the SASS of the LL kernel; make test-gpu on the head.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L/tr
t0=$(date +%s)
cuobjdump -sass build-ab/sass/coll_ll.fatbin | gzip > $OUT/sass_coll_ll.txt.gz
TR="SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/trace/libsymcomm_cuda.so"
for spec in allreduce:8 allgather:8 broadcast:8 reduce:8 reducescatter:8 alltoall:8 allreduce:1K allreduce:4K allreduce:64K allgather:64K; do
  o=${spec%%:*}; b=${spec#*:}
  for v in trace main nccl; do
    case $v in trace) ev="$TR"; eng="";; main) ev="SYMCOMM_BACKEND=cuda"; eng="";; nccl) ev=""; eng="--engine nccl";; esac
    timeout -k 5 100 env $ev build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf $eng -o $o -b $b -e $b -G 1 -n 2100 -w 20 -c 1 -R 1 > $L/tr/${o}_${b}_$v.log 2>&1
    echo "$o $b $v rc=$? $(grep -E '^ +[0-9]' $L/tr/${o}_${b}_$v.log | awk '{print $6}' | head -1) $(grep -h LLTR $L/tr/${o}_${b}_$v.log | head -2 | tr '\n' ' ')"
  done
done
echo "phase 1 $(( $(date +%s)-t0 ))s"
for G in 1 10; do
  for v in main nccl; do
    case $v in main) ev="SYMCOMM_BACKEND=cuda"; eng="";; nccl) ev=""; eng="--engine nccl";; esac
    timeout -k 5 100 env $ev build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf $eng -o allreduce -b 8 -e 64K -f 8 -G $G -n 100 -w 20 -c 1 -R 1 > $L/G${G}_$v.log 2>&1
    echo "G$G $v rc=$? $(grep -E '^ +[0-9]' $L/G${G}_$v.log | awk '{printf "%s:%s ", $1, $6}')"
  done
done
echo "phase 2 $(( $(date +%s)-t0 ))s"
grep -h "Out of bounds" $L/*.log $L/tr/*.log | sort | uniq -c
timeout -k 5 400 env OUT=$L/gpu bash tests/gpu/run.sh build > $L/test_gpu.log 2>&1; echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"
grep -E "^FAIL" $L/test_gpu.log | cut -c1-120; grep -E "passed|failed" $L/test_gpu.log | tail -1
cd $OUT && tar czf g1.logs.tgz logs && rm -rf logs
