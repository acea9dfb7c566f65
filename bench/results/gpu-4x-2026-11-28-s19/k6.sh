#!/usr/bin/env bash
# session 19 call k6 (4x H200): k5's unroll comparison again (its files did not come back: make test-gpu's
# logs filled $OUT), then issue 9's gate runs 2 and 3 with the build of k4 (run 1: k4) into build/gate4n.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$PWD/build/k6; mkdir -p $O
pack() { (cd build && tar czf $OUT/k6.tgz k6 gate4n 2>/dev/null); }
cub=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] 2>/dev/null | head -1)
[ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 np=$2; shift 2; timeout -k 5 60 $R -n $np --timeout 55 -- $P -d float32 -G 1 -R 1 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; }
for np in 4 2; do
  for v in main u4 c8; do
    lib=build/lib/libsymcomm_cuda.so; [ $v != main ] && lib=build-ab/$v/libsymcomm_cuda.so
    SYMCOMM_CUDA_BACKEND_PATH=$PWD/$lib g np$np-$v $np -o allreduce,allgather,reducescatter,alltoall -b 1M -e 1G -f 4
  done
done
pack
for r in 2 3; do
  timeout -k 5 200 bash bench/run_gpu.sh --gate --run $r --build build --no-make --out build/gate4n --timeout 150 > $O/gate-run$r.out 2>&1
  echo "gate run $r rc=$? $(( $(date +%s)-t0 ))s"; pack
done
ls -la $OUT; echo "total $(( $(date +%s)-t0 ))s"
