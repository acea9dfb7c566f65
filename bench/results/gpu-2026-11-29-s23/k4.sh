#!/usr/bin/env bash
# session 23 call k4 (1 H200): A/B of the eager start with one share a direction (the flag where the turn
# has come, else 0) and eager_unacked read with the done counter, current only when it names the message
# before (v2-start-one-share.diff) against main (afa57f6 + the one-vote eager receive of k3), on the proxy:
# sendrecv 8 B-32 KiB, 2 ranks as threads, alternating, 3 rounds; then make test-gpu's send/recv steps with
# the variant (SYMCOMM_CUDA_BACKEND_PATH).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k4; mkdir -p $O/test-gpu
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do for v in main v2; do
  L=$PWD/build/lib/libsymcomm_cuda.so; [ $v = v2 ] && L=$PWD/build-ab/s23v2/libsymcomm_cuda.so
  SYMCOMM_CUDA_BACKEND_PATH=$L t sr2-$v-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
done; done
ONLY='^(p2p_size_mismatch|p2p_eager_mismatch_odd_2|p2p_lanes_mismatch_2|p2p_sizes_2|p2p_two_streams|p2p_eager_order_10000|p2p_alltoall_4|gpu_graph_1000_2|perf_threads_2|perf_threads_4)$' \
SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/s23v2/libsymcomm_cuda.so SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 300 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -8
cd $OUT && tar czf k4.tgz k4 && rm -rf k4; echo "total $(( $(date +%s)-t0 ))s"
