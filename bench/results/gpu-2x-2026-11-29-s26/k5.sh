#!/usr/bin/env bash
# session 26 call k5 (2x H200): why the gate's sendrecv 8 B reads 9.5 us (NCCL plain 7.7) where sweeps of 1000
# iterations read 6.0 (6.3): sendrecv 8 B-1 KiB and all-reduce 8 B-1 KiB with a graph of 20, 100 and 1000
# iterations (-G 1 -n N) and without graphs (-G 0 -n 1000), symcomm -R 1 (main N, build/) against NCCL plain,
# alternating, 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
for r in 1 2; do
  for m in g20 g100 g1000 nog; do
    case $m in g20) M="-G 1 -n 20 -w 5";; g100) M="-G 1 -n 100 -w 5";; g1000) M="-G 1 -n 1000 -w 50";; nog) M="-G 0 -n 1000 -w 50";; esac
    for e in sym nccl; do
      E="--engine symcomm -R 1"; [ $e = nccl ] && E="--engine nccl -R 0"
      timeout -k 5 60 $R $P $E -o sendrecv,allreduce -b 8 -e 1K -f 4 $M > $O/$e-$m-r$r.txt 2>&1
      echo "== $e-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^# [a-z]+, |^ +[0-9]+ " $O/$e-$m-r$r.txt | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s %s;", $1, $6, $10}'; echo
    done
  done
done
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
