#!/usr/bin/env bash
# session 26 call k7 (2x H200): where the barrier paths' 16 us go on 2 GPUs: build-ab/vbar (N with
# ../gpu-2026-11-29-s22/stamps-s22.patch, -DSC_BAR_TRACE, kernels coll_windows coll_oneshot coll_direct),
# block 0's stamps averaged over 2048 calls: all-gather, reduce-scatter, all-to-all 4 MiB (windows), all-reduce
# 2 MiB (one-shot) and 8 MiB (windows); then the same sizes with N for the times.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k7; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
for c in allgather:4M reducescatter:4M alltoall:4M allreduce:2M allreduce:8M; do
  op=${c%:*}; sz=${c#*:}
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/vbar/libsymcomm_cuda.so timeout -k 5 90 $R $P -R 1 -o $op -b $sz -e $sz -n 4200 -w 10 -G 1 > $O/tr-$op-$sz.txt 2>&1
  echo "== tr-$op-$sz rc=$? $(( $(date +%s)-t0 ))s"; grep -E "BARTR" $O/tr-$op-$sz.txt | head -4; grep -E "^ +[0-9]+ " $O/tr-$op-$sz.txt
  timeout -k 5 90 $R $P -R 1 -o $op -b $sz -e $sz -n 1000 -w 20 -G 1 > $O/n-$op-$sz.txt 2>&1
  echo "== n-$op-$sz rc=$?"; grep -E "^ +[0-9]+ " $O/n-$op-$sz.txt
done
cd $OUT && tar czf k7.tgz k7 && rm -rf k7; echo "total $(( $(date +%s)-t0 ))s"
