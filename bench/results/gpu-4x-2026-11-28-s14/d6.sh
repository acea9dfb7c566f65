#!/usr/bin/env bash
# session 14 call 6: the traced LL all-reduce (build-ab/exp, SC_EXP=256 / 511) with 512, 128 and 32 threads a block
# (SC_LL_THREADS, the experiment build's launch).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L | head -1
mkdir -p $OUT/logs
for e in 256 511; do
  for th in 512 128 32; do
    timeout -k 5 100 env SYMCOMM_BACKEND=cuda SC_EXP=$e SC_LL_THREADS=$th LD_LIBRARY_PATH=$PWD/build-ab/exp build/bin/symcomm-run -n 4 --timeout 90 -- \
      build/bin/symcomm-perf -o allreduce -b 8 -e 8 -G 1 -n 1000 -w 50 -c 1 -R 1 > $OUT/logs/th_${e}_$th.log 2>&1
    echo "exp $e threads $th rc=$? $(grep -E '^ +8 ' $OUT/logs/th_${e}_$th.log | awk '{print $6 " us"}')"
    grep TRACE $OUT/logs/th_${e}_$th.log | sort | head -2
  done
done
timeout -k 5 100 build/bin/symcomm-run -n 4 --timeout 90 -- build/bin/symcomm-perf --engine nccl -o allreduce -b 8 -e 8 -G 1 -n 1000 -w 50 -c 1 -R 1 > $OUT/logs/nccl_4.log 2>&1
echo "nccl rc=$? $(grep -E '^ +8 ' $OUT/logs/nccl_4.log | awk '{print $6 " us"}')"
cd $OUT && tar czf logs.tgz logs && rm -rf logs
