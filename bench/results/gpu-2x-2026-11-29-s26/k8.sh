#!/usr/bin/env bash
# session 26 call k8 (2x H200): k5's short graphs again, told apart: a graph of 20 iterations launched once
# (-G 1 -n 20), 50 times back to back (-G 50 -n 20: 1000 iterations in 50 launches) and a graph of 1000 once
# (-G 1 -n 1000); sendrecv and all-reduce 8 B-512 B, symcomm -R 1 (main N) against NCCL plain, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k8; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
for r in 1 2; do
  for m in g1n20 g50n20 g1n1000; do
    case $m in g1n20) M="-G 1 -n 20 -w 5";; g50n20) M="-G 50 -n 20 -w 5";; g1n1000) M="-G 1 -n 1000 -w 50";; esac
    for e in sym nccl; do
      E="--engine symcomm -R 1"; [ $e = nccl ] && E="--engine nccl -R 0"
      timeout -k 5 60 $R $P $E -o sendrecv,allreduce -b 8 -e 512 -f 4 $M > $O/$e-$m-r$r.txt 2>&1
      echo "== $e-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^# [a-z]+, |^ +[0-9]+ " $O/$e-$m-r$r.txt | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s %s;", $1, $6, $10}'; echo
    done
  done
done
cd $OUT && tar czf k8.tgz k8 && rm -rf k8; echo "total $(( $(date +%s)-t0 ))s"
