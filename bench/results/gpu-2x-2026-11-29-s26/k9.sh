#!/usr/bin/env bash
# session 26 call k9 (2x H200): is k5/k8's fixed cost of a short timed graph the harness's barrier? symcomm-perf's
# barrier is an all-reduce on a control communicator in host memory (the simulated backend), whose waits
# sleep after SYMCOMM_SPIN_US (default 20 us here): with SYMCOMM_SPIN_US=5000 they spin. sendrecv and
# all-reduce 8 B-512 B, -G 1 -n 20, symcomm -R 1 (main N) and NCCL plain, with and without, 2 rounds; and
# all-reduce and sendrecv 8 B-4 MiB -G 1 -n 20 both ways once.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k9; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s %s;", $1, $6, $10}'; echo; }
for r in 1 2; do
  for s in spin20 spin5000; do
    X=; [ $s = spin5000 ] && X=SYMCOMM_SPIN_US=5000
    for e in sym nccl; do
      E="--engine symcomm -R 1"; [ $e = nccl ] && E="--engine nccl -R 0"
      env $X timeout -k 5 60 $R $P $E -o sendrecv,allreduce -b 8 -e 512 -f 4 -G 1 -n 20 -w 5 > $O/$e-$s-r$r.txt 2>&1
      echo "== $e-$s-r$r rc=$? $(( $(date +%s)-t0 ))s"; show $O/$e-$s-r$r.txt
    done
  done
done
for s in spin20 spin5000; do
  X=; [ $s = spin5000 ] && X=SYMCOMM_SPIN_US=5000
  for e in sym nccl0 nccl1; do
    E="--engine symcomm -R 1"; [ $e = nccl0 ] && E="--engine nccl -R 0"; [ $e = nccl1 ] && E="--engine nccl -R 1"
    env $X timeout -k 5 60 $R $P $E -o allreduce,sendrecv -b 8 -e 4M -f 8 -G 1 -n 20 -w 5 > $O/w-$e-$s.txt 2>&1
    echo "== w-$e-$s rc=$? $(( $(date +%s)-t0 ))s"; show $O/w-$e-$s.txt
  done
done
cd $OUT && tar czf k9.tgz k9 && rm -rf k9; echo "total $(( $(date +%s)-t0 ))s"
