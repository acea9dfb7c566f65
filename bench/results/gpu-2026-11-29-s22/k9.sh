#!/usr/bin/env bash
# session 22 call k9 (1 H200): P2P launches of messages of at most 1 KiB run blocks of 128 threads (main's
# working tree, build/lib). (1) make test-gpu's send/recv steps with 2-4 processes on the one GPU (SHARE_GPU=4,
# correctness) and the perf_threads steps; (2) on the proxy (ranks as threads), sendrecv 8 B-32 KiB against
# s22base (512 threads), alternating.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k9; mkdir -p $O/test-gpu
ONLY='^(p2p_sizes_2|p2p_sizes_4|p2p_into_windows_2|p2p_alltoall_4|p2p_big_group_4|p2p_order_10000|p2p_two_streams|p2p_size_mismatch|p2p_sizes_no_eager_2|p2p_eager_64k_sizes_2|p2p_eager_mismatch_odd_2|p2p_eager_order_10000|gpu_graph_1000_2|net_p2p_sizes_2h|perf_threads.*)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 420 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -20
P=build/bin/symcomm-perf
t() { local name=$1 lim=$2; shift 2; SYMCOMM_DEVICE=0 SYMCOMM_SHARE_DEVICE=1 SYMCOMM_TIMEOUT=10 timeout -k 5 $lim "$@" > $O/$name.txt 2>&1
  echo "== $name rc=$? $(( $(date +%s)-t0 ))s"; grep -v "WARN TOPO" $O/$name.txt | grep -E "^ +[0-9]+ |rror|fail" | head -${HEADN:-12}; }
for r in 1 2 3; do for v in s22base s22small; do
  SYMCOMM_CUDA_BACKEND_PATH=$PWD/build-ab/$v/libsymcomm_cuda.so t sr2-$v-r$r 60 $P --threads 2 -o sendrecv -b 8 -e 32K -f 4 -n 1000 -w 50 -G 1 -R 1
done; done
cd $OUT && tar czf k9.tgz k9 && rm -rf k9; echo "total $(( $(date +%s)-t0 ))s"
