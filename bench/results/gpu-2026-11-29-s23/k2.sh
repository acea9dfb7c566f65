#!/usr/bin/env bash
# session 23 call k2 (1 H200): P2P kernels start early (programmatic dependent launch, SYMCOMM_P2P_EARLY_START)
# on top of k1's send that ends at its put (main's working tree, build/lib). (1) proxy (ranks as threads on one
# GPU): sendrecv 8 B-32 KiB with SYMCOMM_P2P_EARLY_START=0 and 1 and s22main (77ee2b4), alternating, 3 rounds;
# (2) make test-gpu's send/recv, graph and perf_threads steps with 2-4 processes on the one GPU (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O/test-gpu
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do
  t sr2-s22main-r$r 60 build-ab/s22main/bin/symcomm-perf --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
  for e in 0 1; do
    SYMCOMM_P2P_EARLY_START=$e t sr2-early$e-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
  done
done
SYMCOMM_P2P_EARLY_START=1 t sr2-early1-nograph 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 0 -R 1
ONLY='^(p2p_sizes_2|p2p_sizes_4|p2p_into_windows_4|p2p_alltoall_4|p2p_big_group_4|p2p_two_streams|p2p_bad_args_4|p2p_lanes_sizes_4|p2p_lanes_order_3|p2p_sizes_no_eager_2|p2p_eager_64k_sizes_2|p2p_eager_order_10000|gpu_user_stream_2|gpu_graph_1000_4|gpu_graph_async_error_2|gpu_destroy_own_work_2|perf_threads_2|perf_threads_4|perf_threads_4_windows)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 420 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -22
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
