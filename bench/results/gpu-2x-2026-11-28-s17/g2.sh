#!/usr/bin/env bash
# session 17 call 2 (2 GPUs): the LL call's data phase split (trace build, stamps 9-12: enter, marks and source
# pointers, gather, reduce, give), and the pushes moved off the leader's warp (SC_LL_PUSHW1: data line l pushed by
# thread l + 32, tags by warp 2), traced and untraced, against main and NCCL.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L; L=$OUT/logs; mkdir -p $L
t0=$(date +%s)
cuobjdump -sass build-ab/trace/coll_ll.fatbin | gzip > $OUT/sass_trace.txt.gz
for rep in 1 2; do
for spec in allreduce:8 allgather:8 broadcast:8 reduce:8 reducescatter:8 allreduce:4K allgather:32K; do
  o=${spec%%:*}; b=${spec#*:}
  for v in trace tracew main pushw1 nccl; do
    case $v in main) ev="SYMCOMM_BACKEND=cuda"; eng="";; nccl) ev=""; eng="--engine nccl";;
      *) ev="SYMCOMM_BACKEND=cuda SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so"; eng="";; esac
    timeout -k 5 100 env $ev build/bin/symcomm-run -n 2 --timeout 90 -- build/bin/symcomm-perf $eng -o $o -b $b -e $b -G 1 -n 2100 -w 20 -c 1 -R 1 > $L/${o}_${b}_${v}_$rep.log 2>&1
    echo "$o $b $v rc=$? $(grep -E '^ +[0-9]' $L/${o}_${b}_${v}_$rep.log | awk '{print $6}' | head -1) $(grep -h LLTR $L/${o}_${b}_${v}_$rep.log | sed 's/(ns, 1 blocks)//' | head -4 | tr '\n' ' ')"
  done
done
done
echo "$(( $(date +%s)-t0 ))s"
grep -h "Out of bounds" $L/*.log | sort | uniq -c
cd $OUT && tar czf g2.logs.tgz logs && rm -rf logs
