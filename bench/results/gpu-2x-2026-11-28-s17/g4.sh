#!/usr/bin/env bash
# session 17 call 4 (2 GPUs): is it the path's branches? The LL kernel built for one kind, dtype and op
# (-DSC_LL_FIX_KIND=..., all-reduce or all-gather of float32 sum: no dispatch on them) against the new build, traced
# and not; the SASS of the new LL kernel.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L
cuobjdump -sass build-ab/sass/coll_ll.fatbin | gzip > $OUT/sass_new.txt.gz
for rep in 1 2; do
for spec in allreduce:8:new allreduce:8:fixar allreduce:8:trnew allreduce:8:trfixar allreduce:8:nccl allgather:8:new allgather:8:fixag allgather:8:nccl allreduce:2K:new allreduce:2K:fixar allreduce:2K:nccl; do
  IFS=: read o b v <<< "$spec"
  case $v in new) ev="SYMCOMM_BACKEND=cuda"; eng="";; nccl) ev=""; eng="--engine nccl";;
    *) ev="SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; eng="";; esac
  timeout -k 5 100 env $ev build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf $eng -o $o -b $b -e $b -G 1 -n 2100 -w 20 -c 1 -R 1 > $L/${o}_${b}_${v}_$rep.log 2>&1
  echo "$o $b $v rc=$? $(grep -E '^ +[0-9]' $L/${o}_${b}_${v}_$rep.log | awk '{print $6}' | head -1) $(grep -h LLTR $L/${o}_${b}_${v}_$rep.log | sed 's/(ns, 1 blocks)//' | head -2 | tr '\n' ' ')"
done
done
grep -h "Out of bounds" $L/*.log | sort | uniq -c
cd $OUT && tar czf g4.logs.tgz logs && rm -rf logs
