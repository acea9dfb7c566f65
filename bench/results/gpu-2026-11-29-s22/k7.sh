#!/usr/bin/env bash
# session 22 call k7 (1 H200): A/B on the proxy (ranks as threads, one GPU), base (411c757's kernels) against
# div (32-bit divisions where the operands fit: the slices and inboxes before the first barrier; the broken
# counter read with the other counters), alternating, 3 rounds; then make test-gpu's perf_threads steps with div.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k7; mkdir -p $O/test-gpu
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do for v in s22base s22div; do
  export SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so
  SYMCOMM_ALGO=allreduce=twoshot SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_MAX_BLOCKS=16 t tw4-$v-r$r 60 $P --threads 4 -o allreduce -b 64K -e 4M -f 8 -n 1000 -w 50 -G 1 -c 0 -R 1
  SYMCOMM_LL_MAX_BYTES=0 SYMCOMM_COLL_MAX_BLOCKS=16 t rsag4-$v-r$r 60 $P --threads 4 -o allgather,reducescatter -b 64K -e 4M -f 8 -n 1000 -w 50 -G 1 -c 0 -R 1
  SYMCOMM_COLL_MAX_BLOCKS=16 t ll4-$v-r$r 60 $P --threads 4 -o allreduce -b 8 -e 512K -f 8 -n 1000 -w 50 -G 1 -c 0 -R 1
done; done
unset SYMCOMM_CUDA_BACKEND_PATH
ONLY='^perf_threads' OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -5
cd $OUT && tar czf k7.tgz k7 && rm -rf k7; echo "total $(( $(date +%s)-t0 ))s"
