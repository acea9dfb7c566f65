#!/usr/bin/env bash
# session 26 call k15 (2x H200): one long graph against many short ones (k8: symcomm's kernels slower in one
# graph of 1000): 1000 calls as graphs of 20 x 50, 100 x 10, 250 x 4, 500 x 2, 1000 x 1; all-reduce and
# sendrecv 8 B-512 B, symcomm -R 1 (main 7c528db) and NCCL -R 1, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k15; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for m in 20x50 100x10 250x4 500x2 1000x1; do
    for e in sym nccl1; do
      E="--engine symcomm -R 1"; [ $e = nccl1 ] && E="--engine nccl -R 1"
      timeout -k 5 60 $R $P $E -o allreduce,sendrecv -b 8 -e 512 -f 8 -n ${m%x*} -G ${m#*x} -w 20 > $O/$e-$m-r$r.txt 2>&1
      echo "== $e-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$e-$m-r$r.txt
    done
  done
done
cd $OUT && tar czf k15.tgz k15 && rm -rf k15; echo "total $(( $(date +%s)-t0 ))s"
