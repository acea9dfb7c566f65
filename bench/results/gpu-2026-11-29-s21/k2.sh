#!/usr/bin/env bash
# session 21 call k2 (1 H200): the rest of make test-gpu's steps of 2 to 4 ranks, every rank on the one GPU
# (SHARE_GPU=4 -> SYMCOMM_SHARE_DEVICE=1), with 7b74155's build. Left out: the steps k1 ran, topo_check and
# the kill -9 scenarios (they compare GPUs / memory per GPU), memcheck, 8-GPU steps. Timings mean nothing.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k2; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
ONLY='^(comm_basic_2|comm_basic_4|topo_tool|coll_matrix_4|coll_large_4|coll_huge_2|coll_forced_oneshot_4|coll_forced_twoshot_4|coll_1000_small_4|coll_order_4|coll_two_comms_at_once_4|coll_split_rounds_4|coll_forced_split_4|coll_windows_in_place_2|coll_windows_in_place_4|coll_windows_kinds_2|coll_windows_kinds_4|coll_window_any_offset_2|coll_window_any_offset_4|coll_window_same_offset_4|coll_group_mixed_4|coll_bad_args_2|coll_mismatch_4|coll_mismatch_named_4|coll_algo_differs_2|coll_stopped_stream_2|coll_stopped_stream_4|coll_slow_order_2|p2p_sizes_4|p2p_into_windows_4|p2p_alltoall_4|p2p_big_group_4|p2p_bad_args_4|p2p_lanes_sizes_4|p2p_lanes_order_3|p2p_mismatch_no_eager_2|window_4|window_mem_life_2|gpu_user_stream_2|gpu_user_stream_4|gpu_graph_async_error_2|async_error_abort_4|async_error_timeout_3|coll_ll_abort_queued_bcast_blocks_2|coll_abort_queued_oneshot_2|gpu_destroy_own_work_2|drain_deadline_2|gpu_bad_pointers_2|gpu_bad_pointers_4|net_p2p_sizes_2h|net_p2p_sizes_2h_threads|net_coll_matrix_2h|net_p2p_sizes_4x2h|net_p2p_ring_4h|net_coll_matrix_2x2|net_coll_large_2x2|tp_dp_2x2|memory_released)$' \
SHARE_GPU=4 OUT=$O/test-gpu timeout -k 5 560 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL)|passed" $O/test-gpu.out | tail -70
cd $OUT && tar czf k2.tgz k2 && rm -rf k2; echo "total $(( $(date +%s)-t0 ))s"
