#!/usr/bin/env bash
# session 27 call k5 (2x H200): L (build/: the cut build + a claim's 31 lane-ticket skips issued by a warp's
# threads instead of the leader alone, and the two done counters of a small batch's start loaded together
# under one fence instead of two acquire loads in a row) against the cut build (build-ab/cut), sendrecv
# 8 B-64 KiB, 3 rounds alternating: graphs of 20 x 50 and x 1, no graphs; NCCL -R 1 once each. Stamps of L
# (k3-p2p-trace.diff on L): block 0 (the send) and block 1 (the receive). make test-gpu whole with L.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O/test-gpu
nvidia-smi -L > $O/gpus.txt; head -2 $O/gpus.txt
show() { grep -E "^# [a-z]+, |^ +[0-9]+ " $1 | awk '/^#/{printf "\n%s ", $2; next}{printf "%s %s;", $1, $6}'; echo; }
run() { # name cuda-lib perf-args...
  local name=$1 lib=$2; shift 2
  env SYMCOMM_CUDA_BACKEND_PATH=$PWD/$lib timeout -k 5 100 build/bin/symcomm-run -n 2 --timeout 90 -- $PWD/build/bin/symcomm-perf "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; show $O/$name.txt; grep P2PTR $O/$name.txt | tail -1
}
for r in 1 2 3; do
  for v in cut L; do
    L=build/lib/libsymcomm_cuda.so; [ $v = cut ] && L=build-ab/cut/libsymcomm_cuda.so
    run g50-$v-r$r $L -R 1 -o sendrecv -b 8 -e 64K -f 4 -n 20 -G 50 -w 20
    run g1-$v-r$r $L -R 1 -o sendrecv -b 8 -e 64K -f 4 -n 20 -G 1 -w 20
    run g0-$v-r$r $L -R 1 -o sendrecv -b 8 -e 64K -f 4 -n 1000 -G 0 -w 100
  done
done
for g in "-G 50" "-G 1"; do
  run nccl1$(echo $g | tr -d ' -') build/lib/libsymcomm_cuda.so --engine nccl -R 1 -o sendrecv -b 8 -e 64K -f 4 -n 20 $g -w 20
done
run tr0-L build-ab/vtrL/libsymcomm_cuda.so -R 1 -o sendrecv -b 8 -e 8 -n 20 -G 200 -w 50
run tr1-L build-ab/vtrL1/libsymcomm_cuda.so -R 1 -o sendrecv -b 8 -e 8 -n 20 -G 200 -w 50
OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^FAIL|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
