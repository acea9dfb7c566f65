#!/usr/bin/env bash
# session 27 call k1 (2x H200): the kernels' parameters cut after the arguments' bytes (build/: main + the
# launch passing status, record, then the arguments as one buffer of their used size, COLL's peers as
# npeers entries) against base (build-ab/base: main a4a523d, a 4096-byte P2P and 1120-byte COLL parameter
# copied whole). Graphs of 20 launched once (the gate's way) and 50 times, one of 1000; NCCL -R 1 beside;
# the early start off with the cut build (session 26's k16 question); make test-gpu whole with the cut build.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
run() { # name build engine-args perf-args...
  local name=$1 b=$2 e=$3; shift 3
  timeout -k 5 100 $b/bin/symcomm-run -n 2 --timeout 90 -- $PWD/$b/bin/symcomm-perf $e "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; show $O/$name.txt
}
OPS=allreduce,allgather,reducescatter,sendrecv
for r in 1 2; do
  for v in base cut; do
    B=build; [ $v = base ] && B=build-ab/base
    run g1-$v-r$r $B "-R 1" -o $OPS -b 8 -e 32K -f 8 -n 20 -G 1 -w 20
    run g50-$v-r$r $B "-R 1" -o $OPS -b 8 -e 32K -f 8 -n 20 -G 50 -w 20
    run l1000-$v-r$r $B "-R 1" -o allreduce,sendrecv -b 8 -e 512 -f 8 -n 1000 -G 1 -w 20
  done
done
run g1-nccl1 build "--engine nccl -R 1" -o $OPS -b 8 -e 32K -f 8 -n 20 -G 1 -w 20
run g50-nccl1 build "--engine nccl -R 1" -o $OPS -b 8 -e 32K -f 8 -n 20 -G 50 -w 20
run l1000-nccl1 build "--engine nccl -R 1" -o allreduce,sendrecv -b 8 -e 512 -f 8 -n 1000 -G 1 -w 20
export SYMCOMM_COLL_EARLY_START=0 SYMCOMM_P2P_EARLY_START=0
run g50-cut-noearly build "-R 1" -o allreduce,sendrecv -b 8 -e 512 -f 8 -n 20 -G 50 -w 20
run l1000-cut-noearly build "-R 1" -o allreduce,sendrecv -b 8 -e 512 -f 8 -n 1000 -G 1 -w 20
unset SYMCOMM_COLL_EARLY_START SYMCOMM_P2P_EARLY_START
OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
