#!/usr/bin/env bash
# session 26 call k16 (2x H200): is k15's slowdown with the graph's length the early start? All-reduce and
# sendrecv 8 B-512 B, 1000 calls as graphs of 20 x 50 and 1000 x 1, symcomm -R 1 (main d7d2ba0) with the early
# start on and off (SYMCOMM_COLL_EARLY_START=0 SYMCOMM_P2P_EARLY_START=0), 2 rounds.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k16; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
for r in 1 2; do
  for v in early noearly; do
    X=; [ $v = noearly ] && X="SYMCOMM_COLL_EARLY_START=0 SYMCOMM_P2P_EARLY_START=0"
    for m in 20x50 1000x1; do
      env $X timeout -k 5 60 $R $P -R 1 -o allreduce,sendrecv -b 8 -e 512 -f 8 -n ${m%x*} -G ${m#*x} -w 20 > $O/$v-$m-r$r.txt 2>&1
      echo "== $v-$m-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$v-$m-r$r.txt
    done
  done
done
cd $OUT && tar czf k16.tgz k16 && rm -rf k16; echo "total $(( $(date +%s)-t0 ))s"
