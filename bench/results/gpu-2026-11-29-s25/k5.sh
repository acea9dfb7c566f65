#!/usr/bin/env bash
# session 25 call k5 (1 H200): variant M (build-ab/varM: main + k2's one share) against variant B (build/: M plus
# eager lines in batches of 8 a thread, all loads of a batch in flight before any is used; k5-varB.diff) on
# the sendrecv proxy (2 ranks as threads), alternating, 3 rounds, 8 B-64 KiB, eager to 32 KiB (default) and to
# 64 KiB; variant B's make test-gpu send/recv steps and perf_threads (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O/test-gpu
P="env SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 60 build/bin/symcomm-perf --threads 2"
for r in 1 2 3; do for v in varM varB; do for e in x 64K; do
  X=; [ $e = 64K ] && X="SYMCOMM_P2P_EAGER_BYTES=65536"
  [ $v = varM ] && X="$X SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/varM/libsymcomm_cuda.so"
  env $X $P -R 1 -o sendrecv -b 8 -e 64K -f 2 -n 500 -w 50 -G 1 > $O/sr-$v-e$e-r$r.txt 2>&1
  echo "== sr-$v-e$e-r$r rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^ +[0-9]+ " $O/sr-$v-e$e-r$r.txt | awk '{print $1, $6, $10, $9}' | tr '\n' ';'; echo
done; done; done
ONLY='^(p2p_|gpu_graph_1000_2|perf_threads_2|perf_threads_4)' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 320 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
