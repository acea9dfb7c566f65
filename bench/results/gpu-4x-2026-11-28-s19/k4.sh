#!/usr/bin/env bash
# session 19 call k4 (4x H200): main plus the stop word's device copy in every collective and the new LL rules
# (2 GPUs: LL to 1 MiB, 128 blocks from 512 KiB; 3-4 GPUs: LL to 512 KiB, a block per 2-4 KiB): issue 9's gate,
# all parts, run 1 of 3 (8 B .. 1 GiB) into build/gate4n; then the barrier paths' stamps again
# (build-ab/bartr2: the same code plus /work/tools/bartrace.py's stamps).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O
cub=$(ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/cu*/lib/libcublas.so.1[23] 2>/dev/null | head -1)
[ -n "$cub" ] && export LD_LIBRARY_PATH=$(dirname $cub)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout -k 5 420 bash bench/run_gpu.sh --gate --run 1 --build build --no-make --out build/gate4n --timeout 300 > $O/gate-run1.out 2>&1
echo "gate rc=$? $(( $(date +%s)-t0 ))s"; grep -A30 "^| target" $O/gate-run1.out | head -24
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 np=$2; shift 2; timeout -k 5 40 $R -n $np --timeout 35 -- $P -d float32 -G 1 -c 0 -R 1 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; grep -h BARTR $O/$name.txt | head -1; }
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/bartr2/libsymcomm_cuda.so
for np in 4 2; do
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 g np$np-ar64k $np -o allreduce -b 64K -e 64K -n 2500 -w 100
  SYMCOMM_LL_MAX_BYTES=0 g np$np-ag64k $np -o allgather -b 64K -e 64K -n 2500 -w 100
  g np$np-ar4m $np -o allreduce -b 4M -e 4M -n 2500 -w 100
done
cd build && tar czf $OUT/k4-gate4n.tgz gate4n; cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
