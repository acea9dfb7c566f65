#!/usr/bin/env bash
# session 26 call k11 (2x H200): symcomm's cost per timed region (k8, k10: about 40 us against NCCL -R 1's 10-25):
# the early start (programmatic dependent launch) off, SYMCOMM_COLL_EARLY_START=0 SYMCOMM_P2P_EARLY_START=0,
# against on; all-reduce, all-gather, sendrecv 8 B-2 KiB, -G 1 and -G 50 with -n 20, 2 rounds; NCCL -R 1 once.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k11; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for v in early noearly; do
    X=; [ $v = noearly ] && X="SYMCOMM_COLL_EARLY_START=0 SYMCOMM_P2P_EARLY_START=0"
    for g in 1 50; do
      env $X timeout -k 5 60 $R $P -R 1 -o allreduce,allgather,sendrecv -b 8 -e 2K -f 16 -G $g -n 20 -w 5 > $O/$v-g$g-r$r.txt 2>&1
      echo "== $v-g$g-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$v-g$g-r$r.txt
    done
  done
done
for g in 1 50; do
  timeout -k 5 60 $R $P --engine nccl -R 1 -o allreduce,allgather,sendrecv -b 8 -e 2K -f 16 -G $g -n 20 -w 5 > $O/nccl1-g$g.txt 2>&1
  echo "== nccl1-g$g rc=$? $(( $(date +%s)-t0 ))s"; show $O/nccl1-g$g.txt
done
cd $OUT && tar czf k11.tgz k11 && rm -rf k11; echo "total $(( $(date +%s)-t0 ))s"
