#!/usr/bin/env bash
# session 25 call k2 (1 H200): main 917746d (build-ab/var917) against variant M (build/: an eager receive's quick
# look and verdict in one share, k2-varM.diff) on the sendrecv proxy (2 ranks as threads on the one GPU),
# alternating, 3 rounds, 8 B-32 KiB; variant M's make test-gpu send/recv steps (SHARE_GPU=4); the small
# collectives' proxy (2 and 4 threads) as a baseline for this session's later A/B.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O/test-gpu
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf"
for r in 1 2 3; do for v in var917 varM; do
  X=; [ $v = var917 ] && X="SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/var917/libsymcomm_cuda.so"
  env $X $P --threads 2 -R 1 -o sendrecv -b 8 -e 32K -f 2 -n 1000 -w 50 -G 1 > $O/sr-$v-r$r.txt 2>&1
  echo "== sr-$v-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done
for t in 2 4; do
  $P --threads $t -R 1 -o allreduce,allgather,reducescatter,reduce,broadcast,alltoall -b 8 -e 64K -f 4 -n 500 -w 50 -G 1 > $O/coll-t$t.txt 2>&1
  echo "== coll-t$t rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ |^#.*op" $O/coll-t$t.txt | awk '{print $1, $6, $10}' | tr '\n' ';'; echo
done
ONLY='^(p2p_|gpu_graph_1000_2|perf_threads_2)' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
