#!/usr/bin/env bash
# session 21 call k5 (1 H200): make test-gpu's send/recv steps (and the collectives that run P2P steps) with
# the launch's arguments carrying this rank's pad (a->my_pad), ranks sharing the GPU (SHARE_GPU=4).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k5; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
ONLY='^(p2p_.*|window_2|window_4|gpu_user_stream_2|gpu_graph_async_error_2|coll_forced_split_4|coll_split_rounds_4|net_p2p_sizes_2h|net_p2p_sizes_4x2h|net_p2p_ring_4h|tp_dp_2x2|memory_released)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 400 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL)|passed" $O/test-gpu.out | tail -40
cd $OUT && tar czf k5.tgz k5 && rm -rf k5; echo "total $(( $(date +%s)-t0 ))s"
