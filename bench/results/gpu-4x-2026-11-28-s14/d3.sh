#!/usr/bin/env bash
# session 14 call 3: where an 8-byte LL all-reduce's time goes, per rank (build-ab/exp with SC_EXP bit 256: block 0's
# leader stamps %globaltimer at kernel entry, after its pushes, after its waits and at exit; medians at destroy).
# NPS and EXPS choose the rank counts and SC_EXP values (calls 4 and 5: d4.sh, d5.sh).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L | head -1
mkdir -p $OUT/logs
for np in ${NPS:-4 2}; do
  for e in ${EXPS:-0 256 511}; do
    timeout -k 5 100 env SYMCOMM_BACKEND=cuda SC_EXP=$e LD_LIBRARY_PATH=$PWD/build-ab/exp build/bin/symcomm-run -n $np --timeout 90 -- \
      build/bin/symcomm-perf -o allreduce -b 8 -e 8 -G 1 -n 1000 -w 50 -c 1 -R 1 > $OUT/logs/tr_${np}_$e.log 2>&1
    echo "np $np exp $e rc=$? $(grep -E '^ +8 ' $OUT/logs/tr_${np}_$e.log | awk '{print $6 " us"}')"
    grep TRACE $OUT/logs/tr_${np}_$e.log | sort
  done
  timeout -k 5 100 build/bin/symcomm-run -n $np --timeout 90 -- build/bin/symcomm-perf --engine nccl -o allreduce -b 8 -e 8 -G 1 -n 1000 -w 50 -c 1 -R 1 > $OUT/logs/nccl_$np.log 2>&1
  echo "np $np nccl rc=$? $(grep -E '^ +8 ' $OUT/logs/nccl_$np.log | awk '{print $6 " us"}')"
done
cd $OUT && tar czf logs.tgz logs && rm -rf logs
