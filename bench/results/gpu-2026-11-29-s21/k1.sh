#!/usr/bin/env bash
# session 21 call k1 (1 H200: no 2-GPU kind lent): make test-gpu's 2-rank P2P and collective steps with
# both ranks on the one GPU (SHARE_GPU=2 -> SYMCOMM_SHARE_DEVICE=1): the P2P program's eager start
# (74e57a4, 802fc4b), never run on a GPU before, checked bit for bit. Timings mean nothing here (the
# two processes' kernels take turns on the GPU). Logs packed into k1.tgz.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s); O=$OUT/k1; mkdir -p $O/test-gpu; nvidia-smi -L | tee $O/gpus.txt
nvidia-smi -q | grep -iE "compute mode|mig mode" -A1 | head -8 | tee -a $O/gpus.txt
ONLY='^(comm_basic_2|p2p_sizes_2|p2p_two_streams|p2p_size_mismatch|p2p_order_10000|p2p_eager_order_10000|p2p_sizes_no_eager_2|p2p_eager_64k_sizes_2|p2p_lanes_mismatch_2|p2p_eager_mismatch_odd_2|p2p_into_windows_2|coll_matrix_2|gpu_graph_1000_2|window_2|coll_ll_abort_queued_2|async_error_disagree_2|same_gpu_refused)$' \
SHARE_GPU=2 OUT=$O/test-gpu timeout -k 5 540 bash tests/gpu/run.sh build > $O/test-gpu.out 2>&1
echo "test-gpu rc=$? $(( $(date +%s)-t0 ))s"; grep -E "^(PASS|FAIL|SKIP)|passed" $O/test-gpu.out | tail -24
cd $OUT && tar czf k1.tgz k1 && rm -rf k1; echo "total $(( $(date +%s)-t0 ))s"
