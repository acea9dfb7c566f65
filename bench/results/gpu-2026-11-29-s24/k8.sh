#!/usr/bin/env bash
# session 24 call k8 (2x H200): make test-gpu's send/recv steps on 2 GPUs with k7's variant B in main (an eager
# receive whose header is there with its size looks again at once for a data line still on its way).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k8; mkdir -p $O/test-gpu
ONLY='^(p2p_sizes_2|p2p_into_windows_2|p2p_size_mismatch|p2p_lanes_mismatch_2|p2p_eager_mismatch_odd_2|p2p_eager_64k_sizes_2|p2p_two_streams|p2p_mismatch_no_eager_2|p2p_sizes_no_eager_2|p2p_eager_order_10000|perf_threads_2)$' \
OUT=$O/test-gpu timeout -k 5 120 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -14
cd $OUT && tar czf k8.tgz k8 && rm -rf k8; echo "total $(( $(date +%s)-t0 ))s"
