#!/usr/bin/env bash
# session 19 call k3 (4x H200): where a barrier-path call's time goes. build-ab/bartr/libsymcomm_cuda.so is
# main plus /work/tools/bartrace.py's stamps (block 0's leader, %globaltimer) in the windows, one-shot and
# direct kernels, averages over 2048 calls printed by the kernel (BARTR lines).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k3; mkdir -p $O
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/bartr/libsymcomm_cuda.so
g() { local name=$1 np=$2; shift 2; timeout -k 5 60 $R -n $np --timeout 55 -- $P -d float32 -G 1 -c 0 -R 1 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; grep -h BARTR $O/$name.txt | head -3; }
for np in 4 2; do
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 g np$np-ar64k $np -o allreduce -b 64K -e 64K -n 2500 -w 100
  SYMCOMM_LL_MAX_BYTES=0 g np$np-ag64k $np -o allgather -b 64K -e 64K -n 2500 -w 100
  g np$np-ar4m $np -o allreduce -b 4M -e 4M -n 2500 -w 100
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_BLOCKS=8 g np$np-ar64k-b8 $np -o allreduce -b 64K -e 64K -n 2500 -w 100
  SYMCOMM_LL_MAX_BYTES=0 g np$np-ar64k-R0 $np -o allreduce -b 64K -e 64K -n 2500 -w 100 -R 0
done
cd $OUT && tar czf k3.tgz k3 && rm -rf k3; echo "total $(( $(date +%s)-t0 ))s"
