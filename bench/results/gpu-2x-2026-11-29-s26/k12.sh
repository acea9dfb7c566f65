#!/usr/bin/env bash
# session 26 call k12 (2x H200): is the cost per timed region (k8, k10, k11) the graph's first launch? Variant W
# of symcomm-perf (build-ab/perfW, k12-varW.diff: with SC_VAR_GRAPH_WARM set, the captured graph is launched
# once untimed before the barrier and the timed launch) against main's, -G 1 -n 20, all-reduce, all-gather,
# reduce-scatter, sendrecv 8 B-2 KiB, symcomm -R 1, NCCL plain and -R 1, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k12; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for w in cold warm; do
    P="$PWD/build/bin/symcomm-perf"; X=
    [ $w = warm ] && P="$PWD/build-ab/perfW/symcomm-perf" && X="LD_LIBRARY_PATH=$PWD/build/lib SC_VAR_GRAPH_WARM=1"
    for e in sym nccl0 nccl1; do
      E="--engine symcomm -R 1"; [ $e = nccl0 ] && E="--engine nccl -R 0"; [ $e = nccl1 ] && E="--engine nccl -R 1"
      env $X timeout -k 5 60 $R $P $E -o allreduce,allgather,reducescatter,sendrecv -b 8 -e 2K -f 16 -G 1 -n 20 -w 5 > $O/$e-$w-r$r.txt 2>&1
      echo "== $e-$w-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$e-$w-r$r.txt
    done
  done
done
cd $OUT && tar czf k12.tgz k12 && rm -rf k12; echo "total $(( $(date +%s)-t0 ))s"
