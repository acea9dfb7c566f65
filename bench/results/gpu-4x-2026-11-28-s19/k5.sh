#!/usr/bin/env bash
# session 19 call k5 (4x H200): make test-gpu's suite with the build of k4 (all 4 GPUs), then the large
# collectives' copy and reduction loops unrolled further: build-ab/u4 (SC_CUDA_RED_UNROLL 4: vectors a thread
# loads per source, 2 in main) and build-ab/c8 (SC_CUDA_COPY_UNROLL 8, 4 in main), 1 MiB .. 1 GiB, -R 1.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O
timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "passed|FAIL" $O/test-gpu.out | tail -6
R="build/bin/symcomm-run"; P="build/bin/symcomm-perf"
g() { local name=$1 np=$2; shift 2; timeout -k 5 60 $R -n $np --timeout 55 -- $P -d float32 -G 1 -R 1 "$@" > $O/$name.txt 2>&1; echo "$name rc=$? $(( $(date +%s)-t0 ))s"; }
for np in 4 2; do
  for v in main u4 c8; do
    lib=build/lib/libsymcomm_cuda.so; [ $v != main ] && lib=build-ab/$v/libsymcomm_cuda.so
    SYMCOMM_CUDA_BACKEND_PATH=$PWD/$lib g np$np-$v $np -o allreduce,allgather,reducescatter,alltoall -b 1M -e 1G -f 4
  done
done
g np4-nccl 4 --engine nccl -o allreduce,allgather,reducescatter,alltoall -b 1M -e 1G -f 4
# sendrecv's stamps (build-ab/p2ptr: /work/trace's P2PTR stamps in the P2P program, block 0's leader)
O=$OUT/k5b; mkdir -p $O
for s in 8 4K 64K; do
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/p2ptr/libsymcomm_cuda.so timeout -k 5 40 $R -n 2 --timeout 35 -- $P -d float32 -G 1 -R 1 -c 0 -o sendrecv -b $s -e $s -n 2500 -w 100 > $O/sr-$s.txt 2>&1
  echo "sr $s rc=$?"; grep -h P2PTR $O/sr-$s.txt | head -2
done
cd $OUT && tar czf k5.tgz k5 k5b && rm -rf k5 k5b; echo "total $(( $(date +%s)-t0 ))s"
