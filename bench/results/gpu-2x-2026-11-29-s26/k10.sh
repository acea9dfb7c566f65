#!/usr/bin/env bash
# session 26 call k10 (2x H200): (1) make test-gpu's p2p_ steps with the final build (p2p_order_no_eager_10000
# new); (2) every collective 8 B-64 KiB in graphs of 20 launched once (-G 1, the gate's) and 50 times back to
# back (-G 50), symcomm -R 1 against NCCL plain and -R 1: are the gate's small-size misses per call or per
# timed region?
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k10; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
ONLY='^p2p_' OUT=$O/test-gpu timeout -k 5 200 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed|order" $O/test-gpu.out | tail -6
R="build/bin/symcomm-run -n 2 --timeout 100 --"
P="$PWD/build/bin/symcomm-perf"
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
for g in 1 50; do
  for e in sym nccl0 nccl1; do
    E="--engine symcomm -R 1"; [ $e = nccl0 ] && E="--engine nccl -R 0"; [ $e = nccl1 ] && E="--engine nccl -R 1"
    timeout -k 5 90 $R $P $E -o allreduce,allgather,reducescatter,alltoall,broadcast,reduce,sendrecv -b 8 -e 64K -f 4 \
      -G $g -n 20 -w 5 > $O/c-$e-g$g.txt 2>&1
    echo "== c-$e-g$g rc=$? $(( $(date +%s)-t0 ))s"; show $O/c-$e-g$g.txt
  done
done
cd $OUT && tar czf k10.tgz k10 && rm -rf k10; echo "total $(( $(date +%s)-t0 ))s"
