#!/usr/bin/env bash
# session 24 call k7 (2x H200): sendrecv 8 B-2 KiB, main (f52cbe1) against variant B (build-ab/varB: an eager receive that finds its header of the right size but a data line missing looks again at once, up to SC_DEV_QUICK_POLLS times, instead of waiting for the bell; diff in k7-varB.diff)
# alternating, 3 rounds, 8 B-32 KiB; NCCL plain once.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k7; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; cat $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 55 --"
for r in 1 2 3; do for v in main varB; do
  X=; [ $v = varB ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varB/libsymcomm_cuda.so"
  env $X timeout -k 5 60 $R build/bin/symcomm-perf -R 1 -o sendrecv -b 8 -e 32K -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
  echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done
timeout -k 5 60 $R build/bin/symcomm-perf --engine nccl -R 0 -o sendrecv -b 8 -e 32K -f 2 -n 1000 -w 50 -G 1 > $O/sr-nccl.txt 2>&1
echo "== sr-nccl rc=$?"; grep -E "^ +[0-9]+ " $O/sr-nccl.txt | awk '{print $1, $6, $10}' | tr '\n' ';'; echo
cd $OUT && tar czf k7.tgz k7 && rm -rf k7; echo "total $(( $(date +%s)-t0 ))s"
