#!/usr/bin/env bash
# session 27 call k4 (2x H200): EN (build-ab/ven: the cut build + send/recv and LL collective launches of
# at most 8 blocks letting the next kernel on the stream start once past their wait for the previous one,
# k4-varEN.diff) against the cut build (build/), 2 rounds alternating: graphs of 20 x 50 and x 1 and no
# graphs, 8 B-32 KiB. Stamps (k3-p2p-trace.diff): block 1 (the receive) with the cut build, block 0 with EN,
# block 0 with SYMCOMM_P2P_LANES=1. make test-gpu whole with EN.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
run() { # name cuda-lib perf-args...
  local name=$1 lib=$2; shift 2
  env SYMCOMM_CUDA_BACKEND_PATH=$PWD/$lib timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; show $O/$name.txt; grep P2PTR $O/$name.txt | tail -1
}
OPS=allreduce,allgather,reducescatter,sendrecv
for r in 1 2; do
  for v in cut en; do
    L=build/lib/libsymcomm_cuda.so; [ $v = en ] && L=build-ab/ven/libsymcomm_cuda.so
    run g50-$v-r$r $L -R 1 -o $OPS -b 8 -e 32K -f 8 -n 20 -G 50 -w 20
    run g1-$v-r$r $L -R 1 -o $OPS -b 8 -e 32K -f 8 -n 20 -G 1 -w 20
    run g0-$v-r$r $L -R 1 -o $OPS -b 8 -e 32K -f 8 -n 1000 -G 0 -w 100
  done
done
run tr1-cut build-ab/vtr1/libsymcomm_cuda.so -R 1 -o sendrecv -b 8 -e 8 -n 20 -G 200 -w 50
run tr0-en build-ab/vtren/libsymcomm_cuda.so -R 1 -o sendrecv -b 8 -e 8 -n 20 -G 200 -w 50
SYMCOMM_P2P_LANES=1 run tr0-lanes1 build-ab/vtr/libsymcomm_cuda.so -R 1 -o sendrecv -b 8 -e 8 -n 20 -G 200 -w 50
SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/ven/libsymcomm_cuda.so OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
