#!/usr/bin/env bash
# session 27 call k2 (2x H200): the cut parameters without graphs (the host's launch path: a 4096-byte
# memcpy and zero fill per send/recv launch before, the arguments' bytes now), base against cut, 2 rounds,
# NCCL plain and -R 1 beside; all-reduce with ordinary buffers (-R 0) 8 B-512 MiB against NCCL plain.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
run() { # name build engine-args perf-args...
  local name=$1 b=$2 e=$3; shift 3
  timeout -k 5 150 $b/bin/symcomm-run -n 2 --timeout 140 -- $PWD/$b/bin/symcomm-perf $e "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; show $O/$name.txt
}
for r in 1 2; do
  for v in base cut; do
    B=build; [ $v = base ] && B=build-ab/base
    run g0-$v-r$r $B "-R 1" -o allreduce,allgather,sendrecv -b 8 -e 32K -f 8 -n 1000 -G 0 -w 100
  done
done
run g0-nccl0 build "--engine nccl -R 0" -o allreduce,allgather,sendrecv -b 8 -e 32K -f 8 -n 1000 -G 0 -w 100
run g0-nccl1 build "--engine nccl -R 1" -o allreduce,allgather,sendrecv -b 8 -e 32K -f 8 -n 1000 -G 0 -w 100
for r in 1 2; do
  run r0-cut-r$r build "-R 0" -o allreduce -b 8 -e 512M -f 8 -n 20 -G 1 -w 5
  run r0-nccl0-r$r build "--engine nccl -R 0" -o allreduce -b 8 -e 512M -f 8 -n 20 -G 1 -w 5
done
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
