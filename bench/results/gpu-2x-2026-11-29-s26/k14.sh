#!/usr/bin/env bash
# session 26 call k14 (2x H200): S against N again (k13: S faster in graphs of 20, slower in one graph of 1000):
# sendrecv 8 B-8 KiB with -G 1 -n 200, -G 5 -n 200, -G 1 -n 1000, -G 1 -n 3000, alternating, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k14; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^ +[0-9]+ " $1 | awk '{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for m in g1n200 g5n200 g1n1000 g1n3000; do
    case $m in g1n200) M="-G 1 -n 200 -w 5";; g5n200) M="-G 5 -n 200 -w 5";; g1n1000) M="-G 1 -n 1000 -w 50";; g1n3000) M="-G 1 -n 3000 -w 50";; esac
    for v in N S; do
      X=; [ $v = N ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varN/libsymcomm_cuda.so"
      env $X timeout -k 5 60 $R $P -R 1 -o sendrecv -b 8 -e 8K -f 4 $M > $O/$v-$m-r$r.txt 2>&1
      echo "== $v-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$v-$m-r$r.txt
    done
  done
done
cd $OUT && tar czf k14.tgz k14 && rm -rf k14; echo "total $(( $(date +%s)-t0 ))s"
